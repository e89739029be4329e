// A keep-alive HTTP server for the client benchmark, run in its own process so its CPU does not
// share the client's event loop. Prints nothing; tells the parent its port over IPC, and how many
// requests it has served when asked ('served'). argv[2]: how long it takes to answer, ms (default
// 0: at once).
import http from 'node:http';

const body = Buffer.from('{"ok":true}');
const answerAfterMs = Number(process.argv[2] ?? 0);
const answer = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
};
let served = 0;
const handler = (req, res) => {
  served++;
  req.resume();
  req.on('end', () => {
    if (answerAfterMs > 0) setTimeout(answer, answerAfterMs, res);
    else answer(res);
  });
};
// Three listening ports on the same process: "instances" for the contenders with several.
const servers = [http.createServer(handler), http.createServer(handler), http.createServer(handler)];
const ports = [];
for (const server of servers) {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    ports.push(server.address().port);
    if (ports.length === servers.length) process.send?.({ ports });
  });
}
process.on('message', (message) => {
  if (message === 'served') process.send?.({ served });
  if (message === 'stop') {
    for (const server of servers) server.closeAllConnections();
    Promise.all(servers.map((s) => new Promise((r) => s.close(r)))).then(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
