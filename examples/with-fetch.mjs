/**
 * prazo with Node's global fetch: install() once, and every fetch to the dependency's origins gets its
 * deadline, calibrated timeouts, budgeted retries and hedging; other origins are untouched.
 *
 * Run: node node_modules/prazo/examples/with-fetch.mjs   (from a clone of prazo: npm run build first,
 *      then node examples/with-fetch.mjs)
 */
import http from 'node:http';
import { Deadline, install, uninstall, withDeadline } from 'prazo';

// A stand-in for the inventory service: its first answer is a 503.
let calls = 0;
const server = http.createServer((req, res) => {
  calls++;
  res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ sku: 42, stock: 7, attempt: req.headers['x-prazo-attempt'] }));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

install({
  dependencies: [{ name: 'inventory', origins: [origin], latency: { p99Ms: 180 }, userDeadlineMs: 1500 }],
});
try {
  const res = await withDeadline(Deadline.after(1000), () => fetch(`${origin}/stock/42`));
  console.log(res.status, await res.json()); // 200 { sku: 42, stock: 7, attempt: '2;kind=retry' }
} finally {
  await uninstall();
  server.close();
}
