import { isBrokenCircuitError } from 'cockatiel';
import { afterEach, describe, expect, it } from 'vitest';
import { type Double, startDouble } from '../src/double.js';
import { createCockatielCaller } from '../src/drill/peers/cockatiel-caller.js';
import { findHaproxy, type HaproxySidecar, startHaproxy } from '../src/drill/peers/haproxy-sidecar.js';
import { createNaiveCaller } from '../src/drill/peers/naive-caller.js';
import { createOpossumCaller } from '../src/drill/peers/opossum-caller.js';
import type { PeerSettings } from '../src/drill/peers/settings.js';
import { createUndiciRetryCaller } from '../src/drill/peers/undici-retry-caller.js';

// Each peer of `prazo drill --peers`, driven against a failing double: a misconfigured peer (no retry,
// no timeout, a breaker that never opens) would make prazo look good for the wrong reason.

const SETTINGS: PeerSettings = { connectMs: 200, readMs: 100, attempts: 3, deadlineMs: 1900 };
const SLOW = { answerAtMs: 1500 };
const FAILING = { statuses: [{ status: 503, share: 1 }] };

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function double(behaviour: object): Promise<Double> {
  const d = await startDouble({ behaviour });
  closers.push(() => d.close());
  return d;
}

async function outcome(promise: Promise<unknown>) {
  const started = performance.now();
  try {
    const value = await promise;
    return { value, error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { value: undefined, error: error as Error & { code?: string }, ms: performance.now() - started };
  }
}

/** Requests the double received from the client (the HAProxy checks carry no attempt header). */
const traffic = (d: Double) => d.stats().received - d.stats().unknownKind;

describe('the peers of the drill, against a failing double', () => {
  it('cockatiel retries, times each attempt out and opens its breaker after five failures', async () => {
    const d = await double(SLOW);
    const caller = createCockatielCaller({ ...SETTINGS, origins: [d.url] });
    closers.push(() => caller.close());
    const first = await outcome(caller.call('/stock', {}));
    expect(first.error).toBeDefined();
    expect(first.ms).toBeLessThan(SLOW.answerAtMs);
    expect(d.stats().retries).toBe(2);
    expect(d.stats().originals).toBe(1);
    // Three more failures close to the breaker's count of five in a row; the next call is refused.
    await outcome(caller.call('/stock', {}));
    expect(caller.breakerOpen()).toBe(true);
    const before = d.stats().received;
    const refused = await outcome(caller.call('/stock', {}));
    expect(isBrokenCircuitError(refused.error)).toBe(true);
    // The README's composition retries around the breaker: the refusals are retried, never sent.
    expect(refused.ms).toBeLessThan(SETTINGS.deadlineMs);
    expect(d.stats().received).toBe(before);
  });

  it('opossum times the call out, answers with its fallback and opens its breaker (it does not retry)', async () => {
    const d = await double(SLOW);
    const caller = createOpossumCaller({ ...SETTINGS, origins: [d.url] });
    closers.push(() => caller.close());
    const first = await outcome(caller.call('/stock', {}));
    expect(first.value).toMatchObject({ status: 503 });
    expect(first.ms).toBeGreaterThanOrEqual(SETTINGS.readMs - 5);
    expect(first.ms).toBeLessThan(SLOW.answerAtMs);
    expect(d.stats().received).toBe(1);
    expect(caller.breakerOpen()).toBe(true);
    const refused = await outcome(caller.call('/stock', {}));
    expect(refused.value).toMatchObject({ status: 503 });
    expect(refused.ms).toBeLessThan(50);
    expect(d.stats().received).toBe(1);
  });

  it('undici’s retry interceptor retries 503s and timed-out attempts, and the call ends at its deadline', async () => {
    const failing = await double(FAILING);
    const caller = createUndiciRetryCaller({ ...SETTINGS, origins: [failing.url] });
    closers.push(() => caller.close());
    const answered = await outcome(caller.call('/stock', {}));
    expect(answered.error).toBeDefined();
    expect(failing.stats().originals).toBe(1);
    expect(failing.stats().retries).toBe(2);

    // undici's headersTimeout runs on its coarse timers: a 100 ms timeout fires after about a second.
    const slow = await double({ answerAtMs: 5000 });
    const attempts: Array<{ kind: string; ms: number; ok: boolean }> = [];
    const timing = createUndiciRetryCaller({
      ...SETTINGS,
      origins: [slow.url],
      onAttempt: (kind, ms, ok) => attempts.push({ kind, ms, ok }),
    });
    closers.push(() => timing.close());
    const bounded = await outcome(timing.call('/stock', {}));
    expect(bounded.error?.name).toBe('AbortError');
    expect(bounded.ms).toBeLessThan(SETTINGS.deadlineMs + 500);
    expect(attempts[0]).toMatchObject({ kind: 'original', ok: false });
    expect(attempts[0]!.ms).toBeLessThan(2500);
    expect(slow.stats().retries).toBeGreaterThanOrEqual(1);
  });

  const haproxy = findHaproxy();
  it.skipIf(haproxy === null)(
    'HAProxy retries on another server, times attempts out and marks a failing server down',
    async () => {
      const failing = await double({});
      const healthy = await double({});
      const sidecar: HaproxySidecar = await startHaproxy(haproxy!, {
        ...SETTINGS,
        servers: [failing.url, healthy.url],
        checkPath: '/stock',
      });
      closers.push(() => sidecar.stop());
      const client = createNaiveCaller({
        name: 'haproxy',
        origins: [sidecar.url],
        timeoutMs: 2000,
        attempts: 1,
      });
      closers.push(() => client.close());
      for (let i = 0; i < 10; i++) expect((await client.call('/stock', {})).status).toBe(200);
      expect(traffic(failing)).toBeGreaterThan(0);
      // The failing server's 503s are retried on the other one (option redispatch) until HAProxy marks
      // it down; then it gets no more traffic.
      await failing.set(FAILING);
      const before = traffic(failing);
      let reached = -1;
      const until = performance.now() + 12_000;
      while (traffic(failing) !== reached && performance.now() < until) {
        reached = traffic(failing);
        for (let i = 0; i < 20; i++) expect((await client.call('/stock', {})).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(reached).toBeGreaterThan(before);
      expect(traffic(failing)).toBe(reached);

      await healthy.set(SLOW);
      const started = performance.now();
      const timedOut = await client.call('/stock', {});
      expect(timedOut.status).toBe(504);
      expect(performance.now() - started).toBeLessThan(SLOW.answerAtMs);
    },
    30_000,
  );
});
