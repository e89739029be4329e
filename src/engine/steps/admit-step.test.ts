import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../deadline/context.js';
import { Deadline } from '../../deadline/deadline.js';
import { isPrazoError } from '../../errors.js';
import { createRetryBudget } from '../../policy/retry-budget.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import type { FakeExchange } from '../../testing/fake-transport.js';
import {
  advance,
  createTestDependency,
  flush,
  TEST_START_MS as START,
  settle,
} from '../../testing/test-dependency.js';
import type { DependencyEvents } from '../events.js';

describe("latency: 'auto' learns under a tight caller deadline", () => {
  it('sends calls out as bootstrap probes while there are no healthy samples, and the window learns from them', async () => {
    // The service: 3 s user deadline, 2 attempts, 'auto' (start p99 ≈ 1 s), callers give 400 ms.
    const { dep, clock, transport } = createTestDependency({
      latency: 'auto',
      userDeadlineMs: 3_000,
      attempts: 2,
      liveMinSamples: 20,
    });
    expect(dep.policy().p99Ms).toBeGreaterThan(400);
    let ok = 0;
    for (let i = 0; i < 60; i++) {
      const pending = settle(withDeadline(Deadline.after(400, clock), () => dep.request({ path: '/' })));
      await flush();
      clock.advance(5);
      transport.pending()[0]?.respond(200);
      const { value } = await pending;
      if (value?.status === 200) ok++;
      await value?.body.dump();
      clock.advance(200);
    }
    expect(transport.exchanges).toHaveLength(60);
    expect(ok).toBe(60);
    expect(dep.window().healthy().histogram.count).toBeGreaterThanOrEqual(20);
    expect(dep.policy().sources.p99).toBe('live');
    expect(dep.policy().p99Ms).toBeLessThan(10);
    await dep.close();
  });

  it('keeps the probes to a trickle: one in flight at a time, the other calls fail fast', async () => {
    const { dep, clock, transport } = createTestDependency({ latency: 'auto', userDeadlineMs: 3_000 });
    const calls = Array.from({ length: 5 }, () =>
      settle(withDeadline(Deadline.after(400, clock), () => dep.request({ path: '/' }))),
    );
    await flush();
    expect(transport.exchanges).toHaveLength(1);
    transport.exchanges[0]!.respond(200);
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.value !== undefined)).toHaveLength(1);
    expect(results.filter((r) => isPrazoError(r.error, 'DEADLINE_INSUFFICIENT'))).toHaveLength(4);
    // The probe's slot is free again once it settled.
    const next = settle(withDeadline(Deadline.after(400, clock), () => dep.request({ path: '/' })));
    await flush();
    expect(transport.exchanges).toHaveLength(2);
    transport.exchanges[1]!.respond(200);
    expect((await next).value?.status).toBe(200);
    await advance(clock, 10);
    await dep.close();
  });

  it('never probes past a measured (static) p99: the pre-call check refuses as before', async () => {
    const { dep, clock, transport } = createTestDependency({ latency: { p99Ms: 500 } });
    const { error } = await settle(
      withDeadline(Deadline.after(400, clock), () => dep.request({ path: '/' })),
    );
    expect(error).toMatchObject({ code: 'DEADLINE_INSUFFICIENT', remainingMs: 400, requiredMs: 500 });
    expect(transport.exchanges).toHaveLength(0);
    await dep.close();
  });
});

describe('the retry budget counts what reached the dependency', () => {
  it('counts calls refused before any attempt apart from originals: they never inflate the retry budget', async () => {
    const clock = createFakeClock(START);
    const budget = createRetryBudget({ clock, minPerSecond: 0.1, windowMs: 10_000, maxRatio: 0.1 });
    const failing = (e: FakeExchange): void => e.respond(503);
    const { dep, transport } = createTestDependency({ clock, retryBudget: budget, attempts: 2 }, failing);
    const fastFails: DependencyEvents['fast-fail'][] = [];
    dep.on('fast-fail', (e) => fastFails.push(e));
    for (let i = 0; i < 2_000; i++) {
      const { error } = await settle(dep.request({ path: '/', deadline: Deadline.after(50, clock) }));
      expect(isPrazoError(error, 'DEADLINE_INSUFFICIENT')).toBe(true);
    }
    expect(transport.exchanges).toHaveLength(0);
    expect(budget.state()).toMatchObject({ originals: 0, extras: 0, refused: 2_000 });
    expect(fastFails).toHaveLength(2_000);
    expect(fastFails[0]).toMatchObject({ beforeAttempt: true, remainingMs: 50, requiredMs: 100 });

    for (let i = 0; i < 20; i++) {
      const pending = settle(dep.request({ path: '/' }));
      for (let k = 0; k < 60; k++) await advance(clock, 5);
      await pending;
    }
    const retries = transport.exchanges.filter((e) => e.headers['x-prazo-attempt']?.endsWith('kind=retry'));
    // floor = 0.1/s × 10 s = 1 extra; 20 originals × 10 % = 2.
    expect(retries.length).toBeLessThanOrEqual(2);
    expect(budget.state()).toMatchObject({ originals: 20, refused: 2_000 });
    await dep.close();
  });
});

describe("latency: 'auto' never stays stuck on a stale measurement", () => {
  it('probes again once a live p99 measured in a slow period has aged out of the window, though every call was refused meanwhile', async () => {
    const { dep, clock, transport } = createTestDependency({
      latency: { auto: true, startP99Ms: 400 },
      liveMinSamples: 20,
      liveRefreshMs: 100,
    });
    // A slow period: 40 calls answered after 300 ms make the live p99 ≈ 300 ms.
    for (let i = 0; i < 40; i++) {
      const pending = settle(dep.request({ path: '/' }));
      await flush();
      clock.advance(300);
      transport.pending()[0]?.respond(200);
      await (await pending).value?.body.dump();
    }
    clock.advance(200);
    const last = settle(dep.request({ path: '/' })); // its record reads the window
    await flush();
    transport.pending()[0]?.respond(200);
    await (await last).value?.body.dump();
    const sent = transport.exchanges.length;
    expect(dep.policy().sources.p99).toBe('live');
    expect(dep.policy().p99Ms).toBeGreaterThan(250);
    // Callers now give 250 ms: refused on the measurement, and nothing new is recorded.
    const tight = () => withDeadline(Deadline.after(250, clock), () => dep.request({ path: '/' }));
    let refused = 0;
    let probe: ReturnType<typeof settle> | undefined;
    for (let i = 0; i < 12 && probe === undefined; i++) {
      const call = settle(tight());
      await flush();
      if (transport.exchanges.length > sent) probe = call;
      else {
        expect((await call).error).toMatchObject({ code: 'DEADLINE_INSUFFICIENT' });
        refused++;
        clock.advance(10_000);
      }
    }
    // Once the slow slices have left the 60 s window, the start value is back and a probe goes out.
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(probe).toBeDefined();
    expect(dep.policy().sources.p99).toBe('start');
    transport.pending()[0]?.respond(200);
    expect(((await probe) as { value?: { status: number } }).value?.status).toBe(200);
    await dep.close();
  });
});
