import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { isPrazoError } from '../src/errors.js';
import { settleResources, stableResources } from './support/resources.js';
import { reply, startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  await server?.close();
  dep = undefined;
  server = undefined;
});

describe('resource hygiene', () => {
  it('leaves no timer, socket or listener behind after many calls and close(), and never warns about listeners', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const baseline = await stableResources();
      server = await startServer((req, res, n) => {
        req.resume();
        if (req.url === '/hang') return; // answered by nobody: the call is cancelled
        reply(res, n % 7 === 0 ? 503 : 200);
      });
      dep = dependency({
        name: 'hygiene',
        origins: [server.origin, server.origin.replace('127.0.0.1', 'localhost')],
        // Generous timeouts: this test is about what is left behind, not about timing.
        latency: { p99Ms: 2_000, p95Ms: 2 },
        userDeadlineMs: 10_000,
        hedge: { at: 'p95' },
      });
      dep.on('attempt-end', () => {});
      // One caller signal shared by 64 concurrent calls (one incoming request fanned out).
      const controller = new AbortController();
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: 64 }, async () => {
            const res = await dep!.request({ path: '/ok', signal: controller.signal });
            await res.body.text();
          }),
        );
      }
      const hanging = Array.from({ length: 20 }, () =>
        dep!.request({ path: '/hang', signal: controller.signal }).catch((e: unknown) => e),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();
      for (const error of await Promise.all(hanging)) expect(isPrazoError(error, 'CANCELLED')).toBe(true);
      await dep.close();
      await server.close();
      dep = undefined;
      server = undefined;
      expect(await settleResources(baseline)).toEqual(baseline);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  }, 20_000);
});

describe('fetch()', () => {
  it('returns a standard Response with status, headers and body', async () => {
    server = await startServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () =>
        reply(
          res,
          req.url === '/missing' ? 404 : 200,
          { 'x-echo-type': String(req.headers['content-type']) },
          body || 'hello',
        ),
      );
    });
    dep = dependency({
      name: 'fetch',
      origins: [server.origin],
      latency: { p99Ms: 200 },
      userDeadlineMs: 2_000,
    });
    const res = await dep.fetch('/greeting');
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    const missing = await dep.fetch(new URL('/missing', server.origin));
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
    const form = await dep.fetch('/form', { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(form.headers.get('x-echo-type')).toMatch(/application\/x-www-form-urlencoded/);
    expect(await form.text()).toBe('a=1');
    expect(server.seen.total).toBe(3);
  });

  it('honours init.signal', async () => {
    server = await startServer((req) => {
      req.resume();
    });
    dep = dependency({
      name: 'fetch',
      origins: [server.origin],
      latency: { p99Ms: 200 },
      userDeadlineMs: 2_000,
    });
    const controller = new AbortController();
    const pending = dep.fetch('/slow', { signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort();
    const error = await pending;
    expect(error).toBe(controller.signal.reason);
    expect((error as Error).name).toBe('AbortError');
  });
});
