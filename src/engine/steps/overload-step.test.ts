import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { adaptiveThrottleFrom, normalizeAdaptiveThrottleOptions } from '../../policy/adaptive-throttle.js';
import { ConcurrencyGate, normalizeConcurrencyOptions } from '../../policy/concurrency-gate.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createTestDependency, flush, settle } from '../../testing/test-dependency.js';
import type { Call, DependencyResponse } from '../call.js';
import { type DependencyContext, outcomeOf, settleWith } from '../pipeline.js';
import { overloadStep } from './overload-step.js';

const ONE = ['http://10.0.0.1:80'];

/** The step alone, both protections on, over a context holding only what its fast path reads. */
function stepAlone(next: (call: Call, nowMs: number) => Promise<DependencyResponse>) {
  const clock = createFakeClock(1_000);
  const gate = new ConcurrencyGate(normalizeConcurrencyOptions({ minLimit: 2 }), () => 0.5);
  const throttle = adaptiveThrottleFrom(normalizeAdaptiveThrottleOptions({}));
  const ctx = { clock, random: () => 0.5, closed: false } as unknown as DependencyContext;
  const call = { cancelled: null, attemptCount: 1 } as unknown as Call;
  const step = overloadStep(ctx, throttle, gate)((c, nowMs, out) => settleWith(next(c, nowMs), out));
  // The step's outcome as a promise; what `next` throws, it throws.
  const handler = (c: Call, nowMs: number) => outcomeOf((out) => step(c, nowMs, out));
  return { clock, gate, throttle, call, handler };
}

const answer = (status: number): DependencyResponse =>
  ({ status, attempts: [] }) as unknown as DependencyResponse;

describe('overload step (throttle and concurrency limit in one step)', () => {
  it('gives the slot back exactly once and counts the outcome once: answered, failed, or thrown synchronously', async () => {
    let outcome: 'answer' | 'fail' | 'throw' = 'answer';
    const { gate, throttle, call, handler, clock } = stepAlone(() => {
      if (outcome === 'throw') throw new Error('synchronous');
      return outcome === 'answer' ? Promise.resolve(answer(200)) : Promise.reject(new Error('refused'));
    });
    const answered = handler(call, clock.now());
    expect(gate.inFlight).toBe(1);
    expect((await answered).status).toBe(200);
    expect(gate.inFlight).toBe(0);
    expect(throttle.state(clock.now())).toMatchObject({ requests: 1, accepts: 1 });

    outcome = 'fail';
    await expect(handler(call, clock.now())).rejects.toThrow('refused');
    expect(gate.inFlight).toBe(0);
    expect(throttle.state(clock.now())).toMatchObject({ requests: 2, accepts: 1 });

    outcome = 'throw';
    // A synchronous throw below becomes the step's rejection, never a throw of its own.
    const thrown = handler(call, clock.now());
    expect(gate.inFlight).toBe(0);
    await expect(thrown).rejects.toThrow('synchronous');
    expect(throttle.state(clock.now())).toMatchObject({ requests: 3, accepts: 1 });
    // Released once each: a second release would have taken the count below zero.
    expect(gate.snapshot()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('serves waiting calls first come first served after calls that found a slot free', async () => {
    const { dep, transport } = createTestDependency({
      origins: ONE,
      concurrency: { minLimit: 1 },
      throttle: true,
      random: () => 0.99,
    });
    // The first takes the free slot at once; the next two wait.
    const calls = ['/a', '/b', '/c'].map((path) => settle(dep.request({ path })));
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual(['/a']);
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 1, queued: 2 });
    transport.pending()[0]!.respond(200);
    await flush();
    // A call arriving now finds no free slot (/b holds it) and waits behind /c.
    calls.push(settle(dep.request({ path: '/d' })));
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual(['/b']);
    for (const path of ['/c', '/d']) {
      transport.pending()[0]!.respond(200);
      await flush();
      expect(transport.pending().map((e) => e.path)).toEqual([path]);
    }
    transport.pending()[0]!.respond(200);
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value?.status)).toEqual([200, 200, 200, 200]);
    expect(transport.exchanges.map((e) => e.path)).toEqual(['/a', '/b', '/c', '/d']);
    // Each call released its slot once and was counted once by the throttle.
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
    expect(dep.overload().throttle).toMatchObject({ requests: 4, accepts: 4 });
    await dep.close();
  });

  it('does not count a call the limit refused, nor a waiting call the caller cancelled, for the throttle', async () => {
    const { dep, transport } = createTestDependency({
      origins: ONE,
      concurrency: { minLimit: 1, maxQueued: 1 },
      throttle: true,
      attempts: 1,
      random: () => 0.99,
    });
    const controller = new AbortController();
    const first = settle(dep.request({ path: '/' }));
    const cancelled = settle(dep.request({ path: '/', signal: controller.signal }));
    const refused = settle(dep.request({ path: '/' }));
    await flush();
    expect(isPrazoError((await refused).error, 'CONCURRENCY_LIMITED')).toBe(true);
    controller.abort();
    expect(isPrazoError((await cancelled).error, 'CANCELLED')).toBe(true);
    transport.pending()[0]!.respond(503);
    expect((await first).value?.status).toBe(503);
    expect(dep.overload().throttle).toMatchObject({ requests: 1, accepts: 0 });
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
    await dep.close();
  });
});
