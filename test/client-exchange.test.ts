import { Readable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUndiciTransport, type Transport } from '../src/client/transport.js';
import { ReadTimeoutError } from '../src/errors.js';
import { startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let transport: Transport | undefined;
afterEach(async () => {
  await transport?.close();
  await server?.close();
  transport = undefined;
  server = undefined;
});

/** An abort handle like the client's attempt object. */
function handle() {
  let listener: (() => void) | { handleEvent(): void } | null = null;
  return {
    aborted: false,
    reason: undefined as unknown,
    addEventListener(_: 'abort', l: (() => void) | { handleEvent(): void }) {
      listener = l;
    },
    removeEventListener(_: 'abort', l: unknown) {
      if (listener === l) listener = null;
    },
    abort(reason: Error) {
      this.aborted = true;
      this.reason = reason;
      const l = listener;
      listener = null;
      if (typeof l === 'function') l();
      else l?.handleEvent();
    },
    get listening() {
      return listener !== null;
    },
  };
}

function open(connections = 4): Transport {
  transport = createUndiciTransport({ origins: [server!.origin], connections, connectTimeoutMs: 1_000 });
  return transport;
}

const MIB = 1024 * 1024;

describe('the undici transport (one exchange per attempt)', () => {
  it('reads a 1 MiB body whole, and streams another chunk by chunk', async () => {
    const payload = Buffer.alloc(MIB, 'p');
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(payload);
    });
    const t = open();
    const whole = await t.request(0, 'GET', '/', [], undefined, 5_000, handle());
    expect(Buffer.from(await whole.body.arrayBuffer()).equals(payload)).toBe(true);
    const streamed = await t.request(0, 'GET', '/', [], undefined, 5_000, handle());
    let received = 0;
    let chunks = 0;
    for await (const chunk of streamed.body) {
      received += chunk.length;
      chunks++;
    }
    expect(received).toBe(MIB);
    expect(chunks).toBeGreaterThan(1);
  });

  it('stops listening to the abort handle once the response has ended', async () => {
    server = await startServer((_req, res) => res.end('ok'));
    const t = open();
    const h = handle();
    const res = await t.request(0, 'GET', '/', [], undefined, 5_000, h);
    await res.body.text();
    expect(h.listening).toBe(false);
  });

  it('closes the connection of a body destroyed half-way, and the next call opens another', async () => {
    const connections = new Set<unknown>();
    server = await startServer((req, res) => {
      connections.add(req.socket);
      res.writeHead(200);
      if (req.url === '/drip')
        res.write(Buffer.alloc(1024)); // never ends
      else res.end('ok');
    });
    const t = open(1);
    const res = await t.request(0, 'GET', '/drip', [], undefined, 5_000, handle());
    res.body.destroy();
    await expect(res.body.text()).rejects.toMatchObject({ code: 'BODY_DESTROYED' });
    const next = await t.request(0, 'GET', '/', [], undefined, 5_000, handle());
    await expect(next.body.text()).resolves.toBe('ok');
    expect(connections.size).toBe(2);
  });

  it('rejects an attempt aborted while queued behind a busy connection at once, never sends it, and keeps the connection', async () => {
    const paths: string[] = [];
    const sockets = new Set<unknown>();
    server = await startServer((req, res) => {
      paths.push(req.url ?? '');
      sockets.add(req.socket);
      setTimeout(() => res.end('slow'), req.url === '/first' ? 400 : 0);
    });
    const t = open(1);
    const first = t.request(0, 'GET', '/first', [], undefined, 5_000, handle());
    const h = handle();
    const second = t.request(0, 'GET', '/second', [], undefined, 5_000, h);
    const reason = new Error('attempt timed out');
    const t0 = performance.now();
    setTimeout(() => h.abort(reason), 20);
    await expect(second).rejects.toBe(reason);
    // Well before the connection frees up (400 ms): the queue did not hold the rejection.
    expect(performance.now() - t0).toBeLessThan(300);
    await (await first).body.text();
    const third = await t.request(0, 'GET', '/third', [], undefined, 5_000, handle());
    await third.body.text();
    expect(paths).toEqual(['/first', '/third']);
    // The dropped request cost no connection: the third call reused the first one's.
    expect(sockets.size).toBe(1);
  });

  it('reports an attempt whose own timeout ran out before its request was written as a connect timeout', async () => {
    server = await startServer((_req, res) => {
      setTimeout(() => res.end('slow'), 300);
    });
    const t = open(1);
    const first = t.request(0, 'GET', '/first', [], undefined, 5_000, handle());
    const h = handle();
    const second = t.request(0, 'POST', '/second', [], 'payload', 5_000, h);
    const timeout = new ReadTimeoutError('No answer within 20 ms.', { timeoutMs: 20 });
    setTimeout(() => h.abort(timeout), 20);
    // Nothing was sent: a connect-phase failure, which prazo may send again (even a POST) elsewhere.
    await expect(second).rejects.toMatchObject({ code: 'CONNECT_TIMEOUT', timeoutMs: 20, cause: timeout });
    await (await first).body.text();
  });

  it('skips an informational 103 and answers with the final response', async () => {
    server = await startServer((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'x-final': 'yes' });
      res.end('final');
    });
    const t = open();
    const res = await t.request(0, 'GET', '/', [], undefined, 5_000, handle());
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-final']).toBe('yes');
    await expect(res.body.text()).resolves.toBe('final');
  });

  it('answers a HEAD with an empty body', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-length': '5' });
      res.end();
    });
    const t = open();
    const res = await t.request(0, 'HEAD', '/', [], undefined, 5_000, handle());
    await expect(res.body.text()).resolves.toBe('');
  });

  it('destroys a stream request body when the exchange fails', async () => {
    server = await startServer((req) => {
      req.socket.destroy(); // drops the connection while the body is being sent
    });
    const t = open();
    const body = new Readable({ read() {} });
    body.push('start');
    const sent = t.request(0, 'POST', '/', [], body, 5_000, handle());
    await expect(sent).rejects.toBeTruthy();
    expect(body.destroyed).toBe(true);
  });
});
