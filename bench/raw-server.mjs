// A minimal keep-alive HTTP/1.1 responder on node:net for the client benchmark: bodiless requests
// only (GET), one canned 200 per request head. Several times cheaper than node:http, so that the
// client under test, not the server, sets the pace. Tells the parent its ports over IPC.
import net from 'node:net';

const response = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nkeep-alive: timeout=60\r\n\r\n{"ok":true}',
);
let conns = 0;
let reqs = 0;
function onConnection(socket) {
  conns++;
  socket.setNoDelay(true);
  let tail = '';
  socket.on('data', (chunk) => {
    const text = tail + chunk.toString('latin1');
    let from = 0;
    let count = 0;
    for (;;) {
      const end = text.indexOf('\r\n\r\n', from);
      if (end === -1) break;
      count++;
      from = end + 4;
    }
    tail = text.slice(from);
    if (count === 0) return;
    reqs += count;
    socket.write(count === 1 ? response : Buffer.concat(Array(count).fill(response)));
  });
  socket.on('error', () => {});
}
const servers = [
  net.createServer(onConnection),
  net.createServer(onConnection),
  net.createServer(onConnection),
];
const ports = [];
for (const server of servers)
  server.listen(0, '127.0.0.1', () => {
    ports.push(server.address().port);
    if (ports.length === servers.length) process.send?.({ ports });
  });
process.on('message', (message) => {
  if (message === 'stop') {
    if (process.env.PRAZO_BENCH_DEBUG)
      process.stderr.write(`server: ${conns} connections, ${reqs} requests\n`);
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
