// The server of bench/idempotency-instructions.bench.ts, a process whose instructions callgrind
// counts: one node:http server per port in this one process — the keyed POST handler behind the
// deadline adapter (`withDeadlineHandler`) alone, and behind the same adapter with the in-memory
// idempotency layer (`createIdempotency()`, its defaults). The handler is the one of
// bench/idempotency.bench.ts: it reads the body and answers 201 with a small JSON document. Prints
// {"ports":[adapter, layer]} once both listen. Plain JavaScript on the built package: no loader in
// the counted process.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';

const built = new URL('../../dist/http.js', import.meta.url);
if (!existsSync(built)) {
  console.error('The benchmark measures the built package: run `npm run build` first.');
  process.exit(2);
}
const { createIdempotency, withDeadlineHandler } = await import(built.href);

// `--trust-all`: the callers are inside the trust boundary (an internal hop between prazo services),
// so a request's deadline header counts; without it, as at an edge, the adapter removes the header.
const options = {
  defaultMs: 1000,
  maxMs: 5000,
  ...(process.argv.includes('--trust-all') ? { trust: 'all' } : {}),
};
// `--answer-chars N`: the answer is a JSON document of N characters (a note padded out), made anew
// for each request as a handler makes its own; without it, the 12 characters of `{"order":24}`.
const at = process.argv.indexOf('--answer-chars');
const answerChars = at === -1 ? 0 : Number(process.argv[at + 1]);
const note = 'x'.repeat(Math.max(0, answerChars - 23));
async function handler(req, res) {
  let body = '';
  for await (const chunk of req) body += chunk;
  const payload =
    answerChars === 0 ? JSON.stringify({ order: body.length }) : JSON.stringify({ order: body.length, note });
  res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

const ports = [];
for (const listener of [
  withDeadlineHandler(handler, options),
  withDeadlineHandler(handler, { ...options, idempotency: createIdempotency() }),
]) {
  const server = createServer(listener);
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  ports.push(server.address().port);
}
process.stdout.write(`${JSON.stringify({ ports })}\n`);
// The parent ends the run by closing stdin.
process.stdin.resume();
process.stdin.once('end', () => process.exit(0));
