/**
 * prazo with an SDK built on fetch (ky here), unmodified: install() makes the global fetch prazo's.
 * Turn the SDK's own retries off (ky: retry: 0) so that prazo's budgeted retries are the only ones.
 * A failure with no response reaches the SDK as fetch's TypeError, the prazo error in its `cause`.
 *
 * Run: node node_modules/prazo/examples/with-sdk.mjs   (needs ky: npm install ky; from a clone of
 *      prazo: npm run build first, then node examples/with-sdk.mjs)
 */
import http from 'node:http';
import ky from 'ky';
import { install, isPrazoError, uninstall } from 'prazo';

// A stand-in for the service the SDK calls: /slow never answers in time.
const server = http.createServer((req, res) => {
  if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000).unref();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

install({ dependencies: [{ name: 'api', origins: [origin], latency: { p99Ms: 100 }, userDeadlineMs: 500 }] });
const api = ky.create({ prefixUrl: origin, retry: 0, timeout: false });
try {
  console.log(await api.get('ok').json()); // { ok: true }
  await api.get('slow').catch((error) => {
    const cause = error instanceof TypeError ? error.cause : undefined;
    if (isPrazoError(cause))
      console.log(`${cause.name}: ${cause.code}`); // PrazoError: READ_TIMEOUT (or DEADLINE_EXCEEDED)
    else throw error;
  });
} finally {
  await uninstall();
  server.closeAllConnections();
  server.close();
}
