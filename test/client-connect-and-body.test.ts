import { startDouble } from '@prazo/lab/double';
import { describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';

async function failure(promise: Promise<unknown>): Promise<{ code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string };
  }
  throw new Error('expected a failure');
}

describe('the client holds a connection no longer than its policy says', () => {
  it('ends a connect to a black-holed instance at the connect timeout, not at undici’s 0.5–1 s tick', async () => {
    const double = await startDouble({ behaviour: { connectTimeout: true } });
    const dep = dependency({
      name: 'black-hole',
      origins: [double.url],
      latency: { p99Ms: 50 }, // connect and read timeouts: 70 ms
      userDeadlineMs: 2_000,
      attempts: 1,
    });
    try {
      const started = performance.now();
      const error = await failure(dep.request({ path: '/' }));
      const elapsedMs = performance.now() - started;
      expect(error.code).toBe('CONNECT_TIMEOUT');
      // undici's own connect timer would fire after ≥ 500 ms; generous for a loaded machine.
      expect(elapsedMs).toBeLessThan(450);
      expect(double.stats().received).toBe(0);
    } finally {
      await dep.close();
      await double.close();
    }
  });

  it('enforces the connect timeout of the policy in force, the one policy() and the error report', async () => {
    const double = await startDouble({ behaviour: { connectTimeout: true } });
    const dep = dependency({
      name: 'black-hole',
      origins: [double.url],
      latency: { p99Ms: 50 }, // connect and read timeouts: 70 ms at creation
      userDeadlineMs: 2_000,
      attempts: 1,
    });
    try {
      dep.setPolicy({ ...dep.policy(), connectMs: 150, readMs: 1_000, attempts: 1, warning: null });
      const error = (await failure(dep.request({ path: '/' }))) as {
        code?: string;
        timeoutMs?: number;
        cause?: { message?: string };
      };
      expect(error.code).toBe('CONNECT_TIMEOUT');
      expect(error.timeoutMs).toBe(dep.policy().connectMs);
      expect(error.cause?.message).toContain('timeout: 150ms');
    } finally {
      await dep.close();
      await double.close();
    }
  });

  it('cuts a body that drips past the deadline, at the deadline, with DEADLINE_EXCEEDED', async () => {
    // Headers at once, then 10 chunks 300 ms apart: each gap is inside the 420 ms read timeout,
    // so only the deadline can end the read.
    const double = await startDouble({ behaviour: { slowBodyMs: 3_000, bodyBytes: 1_000 } });
    const dep = dependency({
      name: 'slow-body',
      origins: [double.url],
      latency: { p99Ms: 300 },
      userDeadlineMs: 800,
      attempts: 1,
    });
    try {
      const started = performance.now();
      const response = await dep.request({ path: '/' });
      expect(response.status).toBe(200);
      const error = await failure(response.body.text());
      const elapsedMs = performance.now() - started;
      expect(error.code).toBe('DEADLINE_EXCEEDED');
      expect(elapsedMs).toBeGreaterThanOrEqual(750);
      expect(elapsedMs).toBeLessThan(800 + 400);
    } finally {
      await dep.close();
      await double.close();
    }
  });

  it('leaves the body alone when it is read before the deadline', async () => {
    const double = await startDouble({ behaviour: { slowBodyMs: 200 } });
    const dep = dependency({
      name: 'ok-body',
      origins: [double.url],
      latency: { p99Ms: 300 },
      userDeadlineMs: 1_500,
    });
    try {
      const response = await dep.request({ path: '/' });
      expect((await response.body.text()).length).toBeGreaterThan(0);
    } finally {
      await dep.close();
      await double.close();
    }
  });
});
