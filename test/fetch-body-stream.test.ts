import { once } from 'node:events';
import type http from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { isPrazoError } from '../src/errors.js';
import { startServer, type TestServer, warmUp } from './support/servers.js';

// dep.fetch() hands the Response a web stream fed from the transport's chunks: the caller's cancel
// and the body deadline must come through it (a large body: test/large-body-entry-points.test.ts).

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  dep = undefined;
  await server?.close();
  server = undefined;
});

const CHUNK = Buffer.alloc(64 * 1024, 7);

function catalog(origin: string): Dependency {
  dep = dependency({ name: 'catalog', origins: [origin], latency: { p99Ms: 300 }, userDeadlineMs: 1_500 });
  return dep;
}

describe('dep.fetch() response bodies', () => {
  it('closes the connection when the reader cancels mid-body', async () => {
    let closed: Promise<unknown> = Promise.resolve();
    server = await startServer((_req: http.IncomingMessage, res: http.ServerResponse) => {
      closed = once(res, 'close');
      res.writeHead(200);
      res.write(CHUNK); // and never ends
    });
    const response = await catalog(server.origin).fetch('/endless');
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel(new Error('enough'));
    await closed;
  });

  it('errors the stream with DEADLINE_EXCEEDED when the body outlives the deadline', async () => {
    server = await startServer((_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200);
      res.write('a');
      const timer = setInterval(() => res.write('b'), 50);
      res.on('close', () => clearInterval(timer));
    });
    const started = performance.now();
    const response = await catalog(server.origin).fetch('/drip');
    const error = await response.text().then(
      () => undefined,
      (e: unknown) => e,
    );
    const code = isPrazoError(error)
      ? error.code
      : isPrazoError((error as Error)?.cause)
        ? ((error as Error).cause as { code: string }).code
        : undefined;
    expect(code).toBe('DEADLINE_EXCEEDED');
    // The deadline (userDeadlineMs: 1 500) ends it, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});
