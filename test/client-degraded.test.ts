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

/** A dependency that has fully degraded: it reads the request, then answers after 10 s. */
async function degraded(): Promise<TestServer> {
  return startServer((req, res) => {
    req.resume();
    const timer = setTimeout(() => reply(res, 200), 10_000);
    res.on('close', () => clearTimeout(timer));
  });
}

describe('a POST to a server that hangs after reading the body', () => {
  it('is sent exactly once', async () => {
    server = await degraded();
    dep = dependency({
      name: 'payments',
      origins: [server.origin],
      latency: { p99Ms: 100 },
      userDeadlineMs: 1_000,
    });
    const error = await dep
      .request({ method: 'POST', path: '/charge', body: '{"amount":10}' })
      .catch((e: unknown) => e);
    expect(isPrazoError(error, 'READ_TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(/not idempotent/);
    // Give a wrongful retry every chance to arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.seen.total).toBe(1);
  });
});

describe('a GET to a fully degraded dependency', () => {
  it('fails within the calibrated attempts × timeout and never after the deadline', async () => {
    server = await degraded();
    dep = dependency({
      name: 'supplier',
      origins: [server.origin],
      latency: { p99Ms: 100 },
      userDeadlineMs: 1_000,
    });
    const { readMs, attempts } = dep.policy();
    expect([readMs, attempts]).toEqual([140, 2]);
    const t0 = performance.now();
    const error = await dep.request({ path: '/quote' }).catch((e: unknown) => e);
    const took = elapsedSince(t0);
    expect(isPrazoError(error, 'READ_TIMEOUT')).toBe(true);
    expect(server.seen.total).toBe(2);
    // attempts × timeout, plus the backoff between them (at most its 50 ms base here) and the
    // lateness of timers on a loaded machine.
    expect(took).toBeLessThan(attempts * readMs + 50 + 200);
    expect(took).toBeGreaterThanOrEqual(attempts * readMs - 5);
  });

  it('stops at the deadline when it comes before the attempts are spent', async () => {
    server = await degraded();
    dep = dependency({
      name: 'supplier',
      origins: [server.origin],
      latency: { p99Ms: 100 },
      userDeadlineMs: 1_000,
    });
    const t0 = performance.now();
    const error = await dep
      .request({ path: '/quote', deadline: { limitMs: Date.now() + 200 } })
      .catch((e: unknown) => e);
    const took = elapsedSince(t0);
    expect(isPrazoError(error)).toBe(true);
    expect(took).toBeLessThan(200 + 100); // the deadline, plus timer lateness on a loaded machine
  });

  it('keeps the extras of a burst of failures within the retry budget (counted on the server)', async () => {
    server = await degraded();
    dep = dependency({
      name: 'supplier',
      origins: [server.origin],
      latency: { p99Ms: 200 },
      userDeadlineMs: 1_000,
      attempts: 3,
      connections: 64,
    });
    // 300 calls in waves of 10 every 10 ms: a burst, each call failing after its read timeouts.
    const calls: Promise<string>[] = [];
    for (let wave = 0; wave < 30; wave++) {
      for (let i = 0; i < 10; i++)
        calls.push(
          dep.request({ path: '/quote' }).then(
            () => 'ok',
            (e: { code: string }) => e.code,
          ),
        );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const codes = await Promise.all(calls);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(codes.includes('ok')).toBe(false);
    expect(codes).toContain('RETRY_BUDGET_EXHAUSTED');
    // Budget (10 s window, 10 %, floor 3/s): extras ≤ max(3 × 10, 10 % of 300 originals) = 30.
    const allowed = Math.max(30, 0.1 * calls.length);
    const { original, retry, hedge } = server.seen;
    expect(original).toBeGreaterThan(0);
    expect(retry + hedge).toBeLessThanOrEqual(allowed);
    expect(dep.budget()).toMatchObject({ originals: calls.length });
    expect(dep.budget().extras).toBeLessThanOrEqual(allowed);
    expect(retry + hedge).toBeLessThanOrEqual(dep.budget().extras);
  });
});
