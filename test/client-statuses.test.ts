import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { isPrazoError } from '../src/errors.js';
import { elapsedSince, reply, startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  await server?.close();
  dep = undefined;
  server = undefined;
});

async function withServer(handler: Parameters<typeof startServer>[0], userDeadlineMs = 1_000) {
  server = await startServer(handler);
  dep = dependency({ name: 'orders', origins: [server.origin], latency: { p99Ms: 300 }, userDeadlineMs });
  return { server, dep };
}

describe('statuses', () => {
  for (const status of [400, 404, 422]) {
    it(`returns a ${status} after one attempt`, async () => {
      const { server, dep } = await withServer((_req, res) => reply(res, status));
      const res = await dep.request({ path: '/x' });
      expect(res.status).toBe(status);
      expect(await res.body.text()).toBe('ok');
      expect(server.seen.total).toBe(1);
      expect(res.attempts).toHaveLength(1);
    });
  }

  it('retries a 503 and returns the answer of the retry', async () => {
    const { server, dep } = await withServer((_req, res, n) => reply(res, n === 1 ? 503 : 200));
    const res = await dep.request({ path: '/x' });
    expect(res.status).toBe(200);
    expect(server.seen.original).toBe(1);
    expect(server.seen.retry).toBe(1);
  });

  it('returns the last 503 when every attempt got one', async () => {
    const { server, dep } = await withServer((_req, res) => reply(res, 503));
    const res = await dep.request({ path: '/x' });
    expect(res.status).toBe(503);
    expect(server.seen.total).toBe(2);
  });

  it('retries a 429 with Retry-After: 1 after about a second when the deadline allows it', async () => {
    const { server, dep } = await withServer(
      (_req, res, n) => (n === 1 ? reply(res, 429, { 'retry-after': '1' }) : reply(res, 200)),
      3_000,
    );
    const t0 = performance.now();
    const res = await dep.request({ path: '/x' });
    const took = elapsedSince(t0);
    expect(res.status).toBe(200);
    expect(server.seen.total).toBe(2);
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(2_000);
  });

  it('fails at once with RETRY_AFTER_EXCEEDS_DEADLINE when the wait does not fit the deadline', async () => {
    const { server, dep } = await withServer((_req, res) => reply(res, 429, { 'retry-after': '1' }), 1_000);
    const t0 = performance.now();
    const error = await dep.request({ path: '/x' }).catch((e: unknown) => e);
    expect(isPrazoError(error, 'RETRY_AFTER_EXCEEDS_DEADLINE')).toBe(true);
    expect(elapsedSince(t0)).toBeLessThan(300);
    expect(server.seen.total).toBe(1);
    expect((error as { attempts: unknown[] }).attempts).toHaveLength(1);
  });
});
