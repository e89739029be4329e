import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { classify } from '../src/policy/classify.js';

// Real failures from undici against real node:http servers on 127.0.0.1, classified as the client
// will see them. Bounded: the longest wait is undici's coarse timeout tick (about 1 s).

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(handler: RequestListener): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function closedPort(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.close();
  await once(server, 'close');
  return origin;
}

function client(origin: string, options: Client.Options = {}): Client {
  const c = new Client(origin, options);
  cleanups.push(() => c.destroy());
  return c;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('classify on real undici failures', () => {
  it('sees a refused connection as connect phase, retried on another instance even for POST', async () => {
    const c = client(await closedPort());
    const error = await failure(c.request({ path: '/', method: 'POST', body: 'x' }));
    expect(classify({ kind: 'error', error }, { idempotent: false })).toEqual({
      retry: true,
      phase: 'connect',
      reason: 'connect-refused',
      anotherInstance: true,
    });
  });

  it('sees a socket the server closed as read phase: retried for GET, never for POST', async () => {
    const { origin } = await listen((req) => req.socket.destroy());
    const c = client(origin);
    const getError = await failure(c.request({ path: '/', method: 'GET' }));
    expect(classify({ kind: 'error', error: getError }, { idempotent: true })).toMatchObject({
      retry: true,
      phase: 'read',
    });
    const postError = await failure(c.request({ path: '/', method: 'POST', body: 'x' }));
    expect(classify({ kind: 'error', error: postError }, { idempotent: false })).toMatchObject({
      retry: false,
      phase: 'read',
      reason: 'not-idempotent',
    });
  });

  it('sees a headers timeout as a read timeout', async () => {
    const { origin } = await listen(() => {
      // never answers
    });
    const c = client(origin, { headersTimeout: 100 });
    const error = await failure(c.request({ path: '/', method: 'GET' }));
    expect(classify({ kind: 'error', error }, { idempotent: true })).toMatchObject({
      retry: true,
      phase: 'read',
      reason: 'read-timeout',
    });
  });

  it('never retries a request the caller aborted', async () => {
    const { origin } = await listen(() => {
      // never answers
    });
    const c = client(origin);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20).unref();
    const error = await failure(c.request({ path: '/', method: 'GET', signal: controller.signal }));
    expect(classify({ kind: 'error', error }, { idempotent: true })).toMatchObject({
      retry: false,
      reason: 'cancelled',
    });
  });

  it('never retries a stream body, even after a refused connection: undici has destroyed it', async () => {
    const c = client(await closedPort());
    const body = Readable.from(['a', 'b']);
    const error = await failure(c.request({ path: '/', method: 'PUT', body }));
    expect(body.destroyed).toBe(true);
    expect(classify({ kind: 'error', error }, { idempotent: true, replayable: false })).toMatchObject({
      retry: false,
      phase: 'connect',
      reason: 'stream-body',
    });
  });

  it('reads Retry-After from a real 503', async () => {
    const { origin } = await listen((_req, res) => {
      res.writeHead(503, { 'Retry-After': '1' }).end();
    });
    const response = await client(origin).request({ path: '/', method: 'GET' });
    await response.body.dump();
    expect(
      classify(
        { kind: 'response', status: response.statusCode, headers: response.headers },
        { idempotent: true },
      ),
    ).toEqual({
      retry: true,
      phase: 'response',
      reason: 'status-503',
      retryAfterMs: 1000,
      anotherInstance: false,
    });
  });
});
