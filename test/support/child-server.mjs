// A node:http server in its own process for timing-sensitive client tests, so the server's work
// does not share the client's event loop. argv[2]: 'fast', 'slow-every-20th' (sleeps argv[3] ms,
// default 200, on every 20th request it gets) or 'answer-after' (answers every request argv[3] ms
// after it arrives, and sends 'request' to the parent as each one arrives and { answeredAt } — the
// wall-clock ms — once it has written the answer).
// Messages: 'stats' → { original, retry, hedge, total }; 'stop'.
import http from 'node:http';

const mode = process.argv[2] ?? 'fast';
const sleepMs = Number(process.argv[3] ?? 200);
const seen = { total: 0, original: 0, retry: 0, hedge: 0 };
const server = http.createServer((req, res) => {
  seen.total++;
  const kind = /kind=(original|retry|hedge)/.exec(String(req.headers['x-prazo-attempt'] ?? ''))?.[1];
  if (kind) seen[kind]++;
  const answer = () => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    // The time reported is when the answer has been handed to the kernel (end's callback), not
    // when end() was called: a response is corked until the next tick.
    res.end('ok', () => {
      if (mode === 'answer-after') process.send({ answeredAt: Date.now() });
    });
  };
  if (mode === 'answer-after') process.send('request');
  if ((mode === 'slow-every-20th' && seen.total % 20 === 0) || mode === 'answer-after') {
    const timer = setTimeout(answer, sleepMs);
    res.on('close', () => clearTimeout(timer));
  } else answer();
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'stats') process.send({ stats: seen });
  if (message === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
