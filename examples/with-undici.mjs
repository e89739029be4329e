/**
 * prazo with undici: compose the interceptor onto your own Agent. Its pools carry every request;
 * requests to the dependency's origins get prazo's policy, any other passes through untouched.
 *
 * Run: node node_modules/prazo/examples/with-undici.mjs   (from a clone of prazo: npm run build first,
 *      then node examples/with-undici.mjs)
 */
import http from 'node:http';
import { prazoInterceptor } from 'prazo';
import { Agent } from 'undici';

// Two instances of a stand-in inventory service; the first is slow (a GC pause, a cold cache).
/** A stand-in instance that answers `name` after `delayMs`. */
async function instance(delayMs, name) {
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.end(name), delayMs);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => server.close(),
  };
}
const slow = await instance(800, 'slow');
const fast = await instance(0, 'fast');

const prazo = prazoInterceptor({
  dependencies: [
    {
      name: 'inventory',
      origins: [slow.origin, fast.origin],
      latency: { p99Ms: 1000, p95Ms: 50 },
      userDeadlineMs: 3000,
      hedge: { at: 'p95' }, // a second copy to the other instance when the first is slower than the p95
    },
  ],
});
prazo.dependencies.get('inventory').on('hedge', (e) => console.log(`hedged after ${e.afterMs} ms`));
const agent = new Agent({ connect: { timeout: 300 } });
const client = agent.compose(prazo);
try {
  for (let i = 0; i < 4; i++) {
    const started = performance.now();
    const { statusCode, body } = await client.request({
      origin: slow.origin,
      path: '/stock/42',
      method: 'GET',
    });
    console.log(statusCode, await body.text(), `${Math.round(performance.now() - started)} ms`); // never ~800 ms
  }
} finally {
  await prazo.close();
  await agent.destroy();
  slow.close();
  fast.close();
}
