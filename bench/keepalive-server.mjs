// A keep-alive HTTP server for the client benchmark, run in its own process so its CPU does not
// share the client's event loop. Prints nothing; tells the parent its port over IPC.
import http from 'node:http';

const body = Buffer.from('{"ok":true}');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'stop') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
