import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isPrazoError } from '../src/errors.js';
import { createPoolTransport } from '../src/transport/pool-transport.js';
import type { AbortLike, OutgoingRequest, Transport } from '../src/transport/transport.js';
import { startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let servers: TestServer[] = [];
let transport: Transport | undefined;
afterEach(async () => {
  await transport?.close();
  for (const server of servers) await server.close();
  servers = [];
  transport = undefined;
});

/** An abort handle that never aborts. */
const quiet: AbortLike = {
  aborted: false,
  reason: undefined,
  addEventListener() {},
  removeEventListener() {},
};

function get(origin: string, path = '/'): OutgoingRequest {
  return {
    origin,
    method: 'GET',
    path,
    requestHeaders: [],
    requestBody: undefined,
    timeoutMs: 10_000,
    transportTimeoutMs: 10_000,
  };
}

/** A server answering its own origin, holding requests to /slow until `release()`. */
async function holdingServer(): Promise<TestServer & { release(): void; held(): number }> {
  const waiting: Array<() => void> = [];
  const server = await startServer((req, res) => {
    req.resume();
    const answer = (): void => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${req.socket.localPort}`);
    };
    if (req.url === '/slow') waiting.push(answer);
    else answer();
  });
  servers.push(server);
  return Object.assign(server, {
    release: () => {
      for (const answer of waiting.splice(0)) answer();
    },
    held: () => waiting.length,
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('the pool transport when its origins change', () => {
  it('lets a removed origin finish the request it holds, refuses it new ones, and serves an added origin at once', async () => {
    const a = await holdingServer();
    const b = await holdingServer();
    transport = createPoolTransport({ origins: [a.origin], connections: 4, connectTimeoutMs: 1_000 });
    const inFlight = transport.send(get(a.origin, '/slow'), quiet);
    await until(() => a.held() === 1);

    transport.setOrigins?.([b.origin]);
    expect(transport.origins).toEqual([b.origin]);
    const refused = await transport.send(get(a.origin), quiet).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isPrazoError(refused, 'INVALID_INPUT')).toBe(true);
    const fromB = await transport.send(get(b.origin), quiet);
    expect(fromB.statusCode).toBe(200);
    await fromB.body.text();

    a.release();
    const finished = await inFlight;
    expect(finished.statusCode).toBe(200);
    expect(await finished.body.text()).toBe(new URL(a.origin).port);
    expect(a.seen.total).toBe(1);
  });

  it('close() waits for a removed origin still finishing its requests, and closes it', async () => {
    const a = await holdingServer();
    const b = await holdingServer();
    const t = createPoolTransport({ origins: [a.origin], connections: 4, connectTimeoutMs: 1_000 });
    transport = t;
    const inFlight = t.send(get(a.origin, '/slow'), quiet);
    await until(() => a.held() === 1);
    t.setOrigins?.([b.origin]);

    let closed = false;
    const closing = t.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    a.release();
    const response = await inFlight;
    expect(response.statusCode).toBe(200);
    await response.body.text();
    await closing;
    expect(closed).toBe(true);
    // Closed: a change of origins afterwards opens nothing.
    t.setOrigins?.([a.origin]);
    expect(t.origins).toEqual([b.origin]);
  });
});
