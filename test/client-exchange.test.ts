import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ReadTimeoutError } from '../src/errors.js';
import { createAbortHandle } from '../src/testing/abort-handle.js';
import { createPoolTransport } from '../src/transport/pool-transport.js';
import type { OutgoingRequest, RequestBody, Transport } from '../src/transport/transport.js';
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

function open(connections = 4): Transport {
  transport = createPoolTransport({ origins: [server!.origin], connections, connectTimeoutMs: 1_000 });
  return transport;
}

/** One request to the test server, with a 5 s safety-net timeout. */
function req(method: string, path: string, body?: RequestBody): OutgoingRequest {
  return {
    origin: server!.origin,
    method,
    path,
    requestHeaders: [],
    requestBody: body,
    timeoutMs: 5_000,
    transportTimeoutMs: 5_000,
  };
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
    const whole = await t.send(req('GET', '/'), createAbortHandle());
    expect(Buffer.from(await whole.body.arrayBuffer()).equals(payload)).toBe(true);
    const streamed = await t.send(req('GET', '/'), createAbortHandle());
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
    const h = createAbortHandle();
    const res = await t.send(req('GET', '/'), h);
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
    const res = await t.send(req('GET', '/drip'), createAbortHandle());
    res.body.destroy();
    await expect(res.body.text()).rejects.toMatchObject({ code: 'BODY_DESTROYED' });
    const next = await t.send(req('GET', '/'), createAbortHandle());
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
    const first = t.send(req('GET', '/first'), createAbortHandle());
    const h = createAbortHandle();
    const second = t.send(req('GET', '/second'), h);
    const reason = new Error('attempt timed out');
    const t0 = performance.now();
    setTimeout(() => h.abort(reason), 20);
    await expect(second).rejects.toBe(reason);
    // Well before the connection frees up (400 ms): the queue did not hold the rejection.
    expect(performance.now() - t0).toBeLessThan(300);
    await (await first).body.text();
    const third = await t.send(req('GET', '/third'), createAbortHandle());
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
    const first = t.send(req('GET', '/first'), createAbortHandle());
    const h = createAbortHandle();
    const second = t.send(req('POST', '/second', 'payload'), h);
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
    const res = await t.send(req('GET', '/'), createAbortHandle());
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
    const res = await t.send(req('HEAD', '/'), createAbortHandle());
    await expect(res.body.text()).resolves.toBe('');
  });

  it('destroys a stream request body when the exchange fails', async () => {
    server = await startServer((req) => {
      req.socket.destroy(); // drops the connection while the body is being sent
    });
    const t = open();
    const body = new Readable({ read() {} });
    body.push('start');
    const sent = t.send(req('POST', '/', body), createAbortHandle());
    await expect(sent).rejects.toBeTruthy();
    expect(body.destroyed).toBe(true);
  });
});

describe('the undici transport: backpressure and a failed dispatch', () => {
  it('stops reading from the connection while an unread body holds its limit, and reads on once it is read', async () => {
    const total = 32 * MIB;
    let sent = 0;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 'b');
      const pump = (): void => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const t = open(1);
    const res = await t.send(req('GET', '/'), createAbortHandle());
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Nobody reads: the server is held back by the socket buffers (a few MiB on loopback), not
    // by a client that buffered everything.
    expect(sent).toBeLessThan(total * 0.75);
    expect((await res.body.arrayBuffer()).byteLength).toBe(total);
  });

  it('closes once however often asked, and rejects a request sent after with undici’s error, no longer listening to its abort handle', async () => {
    server = await startServer((_req, res) => res.end('ok'));
    const t = open();
    await t.close();
    await t.close(); // a second close is harmless
    const h = createAbortHandle();
    await expect(t.send(req('GET', '/'), h)).rejects.toMatchObject({ code: 'UND_ERR_DESTROYED' });
    expect(h.listening).toBe(false);
  });
});

describe('the undici transport keyed by origin', () => {
  it('sends each request to the pool of its origin', async () => {
    const seen: string[] = [];
    server = await startServer((req, res) => {
      seen.push(`${req.socket.localAddress}:${req.url}`);
      res.end('ok');
    });
    const other = await startServer((req, res) => {
      seen.push(`other:${req.url}`);
      res.end('other');
    });
    try {
      transport = createPoolTransport({
        origins: [server.origin, other.origin],
        connections: 1,
        connectTimeoutMs: 1_000,
      });
      const a = await transport.send(req('GET', '/a'), createAbortHandle());
      const b = await transport.send({ ...req('GET', '/b'), origin: other.origin }, createAbortHandle());
      await expect(a.body.text()).resolves.toBe('ok');
      await expect(b.body.text()).resolves.toBe('other');
      expect(seen).toEqual([expect.stringMatching(/:\/a$/), 'other:/b']);
    } finally {
      await transport?.close();
      transport = undefined;
      await other.close();
    }
  });

  it('rejects a request to an origin it has no pool for with INVALID_INPUT, and sends nothing', async () => {
    let requests = 0;
    server = await startServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    const t = open();
    await expect(
      t.send({ ...req('GET', '/'), origin: 'http://127.0.0.1:9' }, createAbortHandle()),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(requests).toBe(0);
  });
});

describe('the undici under test', () => {
  it('is the copy PRAZO_TEST_UNDICI_DIR names when set (CI: undici 8), prazo’s own otherwise', () => {
    const dir = process.env.PRAZO_TEST_UNDICI_DIR;
    const expected = dir
      ? createRequire(path.join(dir, 'node_modules', 'undici', 'index.js'))('./index.js')
      : createRequire(import.meta.url)('undici');
    expect(Pool).toBe(expected.Pool);
  });
});
