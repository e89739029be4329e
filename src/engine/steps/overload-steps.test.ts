import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { advance, createTestDependency, flush, settle } from '../../testing/test-dependency.js';
import type { DependencyEvents } from '../events.js';

const ONE = ['http://10.0.0.1:80'];

/**
 * Three calls of `ms`, one after another: the no-load probe's windows (a limit with `windowSamples:
 * 1`), after which the limit has measured a latency of `ms`.
 */
async function probeAt(ms: number, { dep, transport, clock }: ReturnType<typeof createTestDependency>) {
  for (let i = 0; i < 3; i++) {
    const call = settle(dep.request({ path: '/probe' }));
    await flush();
    await advance(clock, ms);
    transport.pending()[0]!.respond(200);
    expect((await call).value?.status).toBe(200);
  }
}

describe('adaptive concurrency limit (concurrency step)', () => {
  it('sends at most the limit at once and starts waiting calls, first come first served, as slots free', async () => {
    const { dep, transport, clock } = createTestDependency({ origins: ONE, concurrency: { minLimit: 2 } });
    const calls = Array.from({ length: 5 }, (_, i) => settle(dep.request({ path: `/${i}` })));
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual(['/0', '/1']);
    expect(dep.overload().concurrency).toMatchObject({ limit: 2, inFlight: 2, queued: 3, probing: true });
    clock.advance(10);
    transport.pending()[0]!.respond(200);
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual(['/1', '/2']);
    for (let i = 0; i < 4; i++) {
      clock.advance(10);
      transport.pending()[0]!.respond(200);
      await flush();
    }
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value?.status)).toEqual([200, 200, 200, 200, 200]);
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
    expect(dep.budget()).toMatchObject({ originals: 5, refused: 0 });
    await dep.close();
  });

  it("with order 'adaptive-lifo', starts the newest waiting call while more wait than the limit, then the first come", async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      concurrency: { minLimit: 2, order: 'adaptive-lifo' },
    });
    const calls = Array.from({ length: 6 }, (_, i) => settle(dep.request({ path: `/${i}` })));
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual(['/0', '/1']);
    const started: string[] = [];
    for (let i = 0; i < 6; i++) {
      clock.advance(10);
      transport.pending()[0]!.respond(200);
      await flush();
      const next = transport.pending().at(-1);
      if (next !== undefined && !started.includes(next.path) && next.path !== '/1') started.push(next.path);
    }
    // Four waiting behind a limit of 2: the newest (/5), then /4; with two left, the first come.
    expect(started).toEqual(['/5', '/4', '/2', '/3']);
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value?.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await dep.close();
  });

  it('fails a call with CONCURRENCY_LIMITED when the queue is full; it counts as refused, not as an original', async () => {
    const { dep, transport } = createTestDependency({
      origins: ONE,
      concurrency: { minLimit: 1, maxQueued: 1 },
    });
    const limited: DependencyEvents['limited'][] = [];
    dep.on('limited', (e) => limited.push(e));
    const calls = [1, 2, 3].map(() => settle(dep.request({ path: '/' })));
    await flush();
    const third = await calls[2]!;
    expect(isPrazoError(third.error, 'CONCURRENCY_LIMITED')).toBe(true);
    expect(third.error).toMatchObject({ limit: 1, queued: 1, dependency: 'inventory', attempts: [] });
    expect(limited).toEqual([
      {
        dependency: 'inventory',
        requestId: 3,
        reason: 'concurrency',
        limit: 1,
        queued: 1,
        remainingMs: 1000,
      },
    ]);
    expect(transport.exchanges).toHaveLength(1);
    expect(dep.budget()).toMatchObject({ originals: 1, refused: 1 });
    transport.pending()[0]!.respond(200);
    await flush();
    transport.pending()[0]!.respond(200);
    expect((await calls[1]!).value?.status).toBe(200);
    await dep.close();
  });

  it('fails a waiting call as soon as it could no longer start in time for the p99, never sending it', async () => {
    const { dep, transport, clock } = createTestDependency({ origins: ONE, concurrency: { minLimit: 1 } });
    const first = settle(dep.request({ path: '/slow' }));
    // A 200 ms deadline and a p99 of 100 ms: it must start by 100 ms; the first call holds the
    // only slot until its read timeout (140 ms).
    const second = settle(dep.request({ path: '/waits', deadline: 200 }));
    await flush();
    await advance(clock, 95);
    expect(dep.overload().concurrency?.queued).toBe(1);
    await advance(clock, 15);
    const { error } = await second;
    expect(isPrazoError(error, 'CONCURRENCY_LIMITED')).toBe(true);
    expect((error as Error).message).toMatch(/could no longer fit the p99/);
    expect(transport.exchanges.map((e) => e.path)).toEqual(['/slow']);
    expect(dep.overload().concurrency?.queued).toBe(0);
    await advance(clock, 400);
    await first;
    await dep.close();
  });

  it('does not send a waiting call whose turn comes after its start-by time, before its timer ends the wait', async () => {
    const { dep, transport, clock } = createTestDependency({ origins: ONE, concurrency: { minLimit: 1 } });
    const first = settle(dep.request({ path: '/slow' }));
    // A 203 ms deadline and a p99 of 100 ms: it must start by 103 ms. The shared timer sweeps every
    // 5 ms, at 100 and 105: the slot frees at 104, between its start-by time and the sweep that
    // would end its wait.
    const second = settle(dep.request({ path: '/waits', deadline: 203 }));
    await flush();
    await advance(clock, 104);
    expect(dep.overload().concurrency?.queued).toBe(1);
    transport.pending()[0]!.respond(200);
    await flush();
    expect(transport.exchanges.map((e) => e.path)).toEqual(['/slow']);
    const { error } = await second;
    expect(isPrazoError(error, 'CONCURRENCY_LIMITED')).toBe(true);
    expect((error as Error).message).toMatch(/its turn came when it could no longer fit the p99/);
    expect((await first).value?.status).toBe(200);
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
    await dep.close();
  });

  it('keeps a waiting call whose start-by time came while the latency measured since fell', async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      latency: { p99Ms: 100 },
      userDeadlineMs: 10_000,
      // One attempt, waiting for its answer past the read timeout (140 ms) until the deadline.
      attempts: 1,
      lastAttempt: 'deadline',
      concurrency: { minLimit: 2, initialLimit: 2, maxLimit: 2, windowSamples: 1, windowMs: 1 },
    });
    await probeAt(600, { dep, transport, clock });
    expect(dep.overload().concurrency).toMatchObject({ rttMs: 600, limit: 2 });
    const held = ['/x1', '/x2'].map((path) => settle(dep.request({ path })));
    const queued = ['/w1', '/w2'].map((path) => settle(dep.request({ path, deadline: 5_000 })));
    // Third in the queue: a wait of ≈ 3 × 600 ÷ 2 = 900 ms leaves the latency measured (600 ms) of
    // its 1 500 ms: it must start by 900 ms.
    const last = settle(dep.request({ path: '/last', deadline: 1_500 }));
    await flush();
    expect(dep.overload().concurrency?.queued).toBe(3);
    // The dependency answers quickly now: the latency measured falls to 100 and 200 ms.
    const answer = async (path: string) => {
      transport
        .pending()
        .find((e) => e.path === path)!
        .respond(200);
      await flush();
    };
    await advance(clock, 100);
    await answer('/x1');
    await advance(clock, 100);
    await answer('/x2');
    // At 900 ms the call needs only the 200 ms measured now: it keeps waiting.
    await advance(clock, 710);
    expect(dep.overload().concurrency?.queued).toBe(1);
    await answer('/w1');
    await answer('/last');
    expect((await last).value?.status).toBe(200);
    await answer('/w2');
    expect((await Promise.all([...held, ...queued])).map((r) => r.value?.status)).toEqual([
      200, 200, 200, 200,
    ]);
    expect(dep.budget()).toMatchObject({ refused: 0 });
    await dep.close();
  });

  it('fails at once when the wait ahead, by the latency measured, would not leave the p99 before the deadline', async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      latency: { p99Ms: 700 },
      concurrency: { minLimit: 1, initialLimit: 1, maxLimit: 1, windowSamples: 1, windowMs: 1 },
    });
    await probeAt(320, { dep, transport, clock });
    expect(dep.overload().concurrency).toMatchObject({ rttMs: 320, limit: 1 });
    const first = settle(dep.request({ path: '/' }));
    // One slot, taken: a wait of ≈ 320 ms leaves less than the p99 (700 ms) of a 1 000 ms deadline.
    const second = await settle(dep.request({ path: '/' }));
    expect(isPrazoError(second.error, 'CONCURRENCY_LIMITED')).toBe(true);
    expect((second.error as Error).message).toMatch(/wait ahead \(≈ 320 ms\)/);
    expect(transport.exchanges).toHaveLength(4);
    transport.pending()[0]!.respond(200);
    await first;
    await dep.close();
  });

  it('refuses no call on a guess before any latency is measured: a new dependency’s first burst waits', async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      latency: { p99Ms: 700 },
      concurrency: { minLimit: 1 },
    });
    // The configured p99 (700 ms) as the time per slot would predict a wait of 1 400 ms for the
    // third call, past what a 1 000 ms deadline leaves: no call has answered yet, so none is refused.
    const calls = [1, 2, 3].map(() => settle(dep.request({ path: '/' })));
    await flush();
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 1, queued: 2 });
    for (let i = 0; i < 3; i++) {
      await advance(clock, 20);
      transport.pending()[0]!.respond(200);
      await flush();
    }
    expect((await Promise.all(calls)).map((r) => r.value?.status)).toEqual([200, 200, 200]);
    expect(dep.budget()).toMatchObject({ refused: 0 });
    await dep.close();
  });

  it('lets the caller cancel a waiting call (CANCELLED) and close() end the waiting ones, leaving no timer', async () => {
    const { dep, transport, clock } = createTestDependency({ origins: ONE, concurrency: { minLimit: 1 } });
    const controller = new AbortController();
    const first = settle(dep.request({ path: '/' }));
    const cancelled = settle(dep.request({ path: '/', signal: controller.signal }));
    const closed = settle(dep.request({ path: '/' }));
    await flush();
    controller.abort();
    expect(isPrazoError((await cancelled).error, 'CANCELLED')).toBe(true);
    expect(dep.overload().concurrency?.queued).toBe(1);
    await dep.close();
    expect(isPrazoError((await closed).error, 'CANCELLED')).toBe(true);
    expect(isPrazoError((await first).error, 'CANCELLED')).toBe(true);
    expect(transport.exchanges).toHaveLength(1);
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('runs a call’s retries inside its one slot', async () => {
    const { dep, transport, clock } = createTestDependency({ origins: ONE, concurrency: { minLimit: 1 } });
    const call = settle(dep.request({ path: '/' }));
    await flush();
    transport.pending()[0]!.respond(503);
    await advance(clock, 100);
    expect(transport.exchanges).toHaveLength(2);
    expect(dep.overload().concurrency?.inFlight).toBe(1);
    transport.pending()[0]!.respond(200);
    expect((await call).value?.status).toBe(200);
    expect(dep.overload().concurrency?.inFlight).toBe(0);
    await dep.close();
  });

  it('sends a hedge copy only when a slot is free, without waiting for one', async () => {
    for (const [minLimit, copies] of [
      [1, 1],
      [2, 2],
    ] as const) {
      const { dep, transport, clock } = createTestDependency({
        hedge: { at: 20 },
        concurrency: { minLimit },
      });
      const call = settle(dep.request({ path: '/' }));
      await advance(clock, 40);
      expect(transport.exchanges, `minLimit ${minLimit}`).toHaveLength(copies);
      for (const e of transport.pending()) e.respond(200);
      expect((await call).value?.status).toBe(200);
      await flush();
      expect(dep.overload().concurrency?.inFlight).toBe(0);
      await dep.close();
    }
  });

  it("with lastAttempt 'deadline', sends the retry beside an attempt at its read timeout only with a slot of its own free; else the attempt waits", async () => {
    for (const [minLimit, sent] of [
      [1, ['1;kind=original']],
      [2, ['1;kind=original', '2;kind=retry']],
    ] as const) {
      const { dep, transport, clock } = createTestDependency({
        lastAttempt: 'deadline',
        concurrency: { minLimit },
      });
      const call = settle(dep.request({ path: '/' }));
      await advance(clock, 300);
      // Past the 140 ms read timeout: the attempt is never cut; the retry goes beside it when a slot
      // is free (the first copy holds the call's slot), and no retry follows when none is.
      expect(
        transport.exchanges.map((e) => e.headers['x-prazo-attempt']),
        `minLimit ${minLimit}`,
      ).toEqual(sent);
      expect(transport.pending()).toHaveLength(sent.length);
      transport.exchanges[0]!.respond(200);
      expect((await call).value?.status).toBe(200);
      // The copy called off keeps its slot while the dependency likely still works on it, then frees it.
      await advance(clock, 500);
      expect(dep.overload().concurrency?.inFlight).toBe(0);
      clock.advance(5);
      expect(clock.pendingTimers()).toBe(0);
      await dep.close();
    }
  });

  it('keeps a busy caller’s calls flowing through the periodic no-load probe: no call waits past its bound, none is refused', async () => {
    // 400 calls a second to a dependency that answers every one in 100 ms: about 40 in flight.
    // Every second (the probe interval, shortened) the limit re-measures the no-load latency. Held
    // at the floor (4) for the probe's windows (30 round trips ≈ 750 ms here), 40 calls would be
    // waiting for every one sent, the queue would grow by ≈ 360 calls a second and calls would be
    // refused; at half the limit, the probe holds back none of them.
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      hedge: false,
      attempts: 1,
      latency: { p99Ms: 150 },
      userDeadlineMs: 2_000,
      concurrency: { probeIntervalMs: 1_000, probeJitter: 0 },
    });
    const startedAt = new Map<object, number>();
    const calls: Promise<{ value?: unknown; error?: unknown }>[] = [];
    let mostQueued = 0;
    let lowestAfterStart = Number.POSITIVE_INFINITY;
    let probes = 0;
    let wasProbing = true;
    for (let t = 0; t < 4_600; t += 5) {
      // The last 600 ms send nothing: the calls still waiting get their slots and answers.
      if (t < 4_000) calls.push(settle(dep.request({ path: '/' })), settle(dep.request({ path: '/' })));
      await flush();
      for (const e of transport.pending()) {
        const at = startedAt.get(e) ?? clock.now();
        startedAt.set(e, at);
        if (clock.now() - at >= 100) e.respond(200);
      }
      clock.advance(5);
      await flush();
      const state = dep.overload().concurrency!;
      mostQueued = Math.max(mostQueued, state.queued);
      if (state.probing && !wasProbing) probes++;
      if (t > 2_000 && t < 4_000) lowestAfterStart = Math.min(lowestAfterStart, state.limit);
      wasProbing = state.probing;
    }
    const results = await Promise.all(calls);
    expect(probes).toBeGreaterThanOrEqual(2);
    expect(results.filter((r) => r.error !== undefined).map((r) => String(r.error))).toEqual([]);
    // Past the start (the first probe knows nothing and runs at the floor), the limit never falls
    // below the ≈ 40 calls in flight that the load needs, and the queue stays short.
    expect(lowestAfterStart).toBeGreaterThanOrEqual(20);
    expect(mostQueued).toBeLessThan(400);
    await dep.close();
  });

  it('does not take a farther instance’s distance for a queue: a failover to it keeps the limit', async () => {
    // Two instances answer in 20 ms, 120 calls a second between them. After 2 s the near one
    // answers 503 to everything (its zone failed) and the calls fail over to the other, which is
    // farther away: it answers in 170 ms, 150 of them on the wire, with no queue. The calls need
    // ≈ 20 in flight there. A limit that read those 150 ms as a queue would fall to its floor and
    // hold the callers at the client's door until its next probe.
    const { dep, transport, clock } = createTestDependency({
      origins: ['http://10.0.0.1:80', 'http://10.0.0.2:80'],
      hedge: false,
      latency: { p99Ms: 400 },
      userDeadlineMs: 2_000,
      concurrency: { probeJitter: 0 },
    });
    const sentAt = new Map<object, number>();
    const calls: Promise<{ value?: { status: number }; error?: unknown }>[] = [];
    let waited = 0;
    let lowest = Number.POSITIVE_INFINITY;
    // Past 6 s nothing new is sent; by 8.5 s every call has ended, answered or out of time.
    for (let t = 0; t < 8_500; t += 5) {
      if (t < 6_000 && (t / 5) % 5 < 3) calls.push(settle(dep.request({ path: '/' })));
      await flush();
      for (const e of transport.pending()) {
        if (!sentAt.has(e)) sentAt.set(e, t);
        const at = sentAt.get(e)!;
        if (at >= 2_000 && e.instance === 0) e.respond(503);
        else if (t - at >= (at >= 2_000 ? 170 : 20)) e.respond(200);
      }
      clock.advance(5);
      await flush();
      const state = dep.overload().concurrency!;
      if (t >= 3_000 && t < 6_000) {
        waited = Math.max(waited, state.queued);
        lowest = Math.min(lowest, state.limit);
      }
    }
    const results = await Promise.all(calls);
    // A few calls meet the near instance's first 503s before it is ejected; they are retried.
    expect(results.filter((r) => r.value?.status !== 200).length).toBeLessThan(10);
    expect(
      transport.exchanges.filter((e) => e.instance === 1 && sentAt.get(e)! >= 2_500).length,
    ).toBeGreaterThan(300);
    // Once the far instance's first answers have shown its distance (a few hundred ms), the limit
    // stays above the ≈ 20 calls the load needs there, and hardly a call waits for a slot.
    expect(lowest).toBeGreaterThanOrEqual(20);
    expect(waited).toBeLessThanOrEqual(5);
    await dep.close();
  });

  it('learns the limit from the calls’ latency (the first windows are a probe at the floor)', async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      concurrency: { minLimit: 2, initialLimit: 8, windowSamples: 4, windowMs: 10 },
    });
    const changes: number[] = [];
    dep.on('concurrency-limit', (e) => changes.push(e.limit));
    for (let i = 0; i < 12; i++) {
      const call = settle(dep.request({ path: '/' }));
      await flush();
      clock.advance(5);
      transport.pending()[0]!.respond(200);
      await call;
    }
    expect(changes).toEqual([8]);
    expect(dep.overload().concurrency).toMatchObject({ limit: 8, noLoadMs: 5, probing: false });
    await dep.close();
  });
});

describe('abandoned work (concurrency step)', () => {
  /** A dependency whose limit finished its probe at 8, every call unanswered until told. */
  async function probed(attempts = 1, origins = ONE) {
    const t = createTestDependency({
      origins,
      hedge: false,
      attempts,
      concurrency: { minLimit: 2, initialLimit: 8, windowSamples: 1, windowMs: 10 },
    });
    for (let i = 0; i < 3; i++) {
      const call = settle(t.dep.request({ path: '/probe' }));
      await flush();
      t.clock.advance(5);
      t.transport.pending()[0]!.respond(200);
      await call;
    }
    expect(t.dep.overload().concurrency).toMatchObject({ limit: 8, probing: false });
    return t;
  }

  it('cuts the limit at once when an attempt runs out of time (a drop), once for the calls of one flight', async () => {
    const { dep, clock } = await probed();
    const calls = Array.from({ length: 6 }, () => settle(dep.request({ path: '/slow' })));
    await flush();
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 6, abandoned: 0 });
    // The read timeout (p99 100 ms × 1.4) passes for all six: one drop, to half of the six.
    await advance(clock, 145);
    for (const call of calls) expect(isPrazoError((await call).error, 'READ_TIMEOUT')).toBe(true);
    expect(dep.overload().concurrency).toMatchObject({ limit: 3, drops: 1, inFlight: 0 });
    await dep.close();
  });

  it('keeps the slot of a timed-out attempt while the dependency likely still works on it, then lets a waiting call start', async () => {
    const { dep, clock, transport } = await probed();
    const slow = Array.from({ length: 4 }, () => settle(dep.request({ path: '/slow' })));
    await flush();
    await advance(clock, 145);
    await Promise.all(slow);
    // Four attempts given up at 140 ms, the limit cut to 2: the dependency is still busy with them,
    // so the client sends nothing more until about one more latency (140 ms here) has passed.
    expect(dep.overload().concurrency).toMatchObject({ limit: 2, inFlight: 0, abandoned: 4 });
    const next = settle(dep.request({ path: '/next' }));
    await flush();
    expect(transport.pending().map((e) => e.path)).toEqual([]);
    expect(dep.overload().concurrency).toMatchObject({ queued: 1 });
    await advance(clock, 150);
    expect(dep.overload().concurrency).toMatchObject({ abandoned: 0, inFlight: 1, queued: 0 });
    expect(transport.pending().map((e) => e.path)).toEqual(['/next']);
    transport.pending()[0]!.respond(200);
    expect((await next).value?.status).toBe(200);
    await dep.close();
  });

  it('does not retry while the dependency still works on abandoned attempts beyond the limit', async () => {
    const { dep, clock, transport } = await probed(2);
    const calls = Array.from({ length: 4 }, () => settle(dep.request({ path: '/slow' })));
    await flush();
    await advance(clock, 145);
    for (let i = 0; i < 10; i++) await advance(clock, 5);
    for (const call of calls) {
      const { error } = await call;
      expect(isPrazoError(error, 'READ_TIMEOUT')).toBe(true);
      expect((error as { attempts: unknown[] }).attempts).toHaveLength(1);
      // The reason is given once.
      expect((error as Error).message).toMatch(
        / Not retried: the dependency is past its concurrency limit\.$/,
      );
    }
    expect(transport.exchanges.filter((e) => e.path === '/slow')).toHaveLength(4);
    await dep.close();
  });

  it('retries on another instance when the work abandoned beyond the limit is on the instance the retry leaves', async () => {
    // Two instances; the first answers nothing (hung), the second at once. The attempts abandoned on
    // the first hold slots past the limit, but a retry goes to the second: it queues behind none of it.
    const { dep, clock, transport } = await probed(2, ['http://10.0.0.1:80', 'http://10.0.0.2:80']);
    const calls = Array.from({ length: 8 }, (_, i) => settle(dep.request({ path: `/${i}` })));
    await flush();
    const hung = transport.pending().filter((e) => e.instance === 0).length;
    expect(hung).toBeGreaterThanOrEqual(2);
    // The second instance's answers come; the first's attempts run to their read timeout (140 ms).
    await advance(clock, 20);
    for (const e of transport.pending().filter((x) => x.instance === 1)) e.respond(200);
    await flush();
    await advance(clock, 125);
    for (let i = 0; i < 6; i++) {
      for (const e of transport.pending().filter((x) => x.instance === 1)) e.respond(200);
      await advance(clock, 5);
    }
    const gate = dep.overload().concurrency!;
    // Beyond the limit with the abandoned work counted, as the rule for one instance would see it.
    expect(gate.abandoned).toBe(hung);
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value?.status ?? String(r.error))).toEqual(
      Array.from({ length: 8 }, () => 200),
    );
    // Every hung attempt was retried once, on the second instance.
    const retries = transport.exchanges.filter((e) => e.headers['x-prazo-attempt']?.includes('kind=retry'));
    expect(retries.map((e) => e.instance)).toEqual(Array.from({ length: hung }, () => 1));
    await dep.close();
  });

  it('keeps a slot for an attempt the caller cancelled, without cutting the limit', async () => {
    const { dep, clock } = await probed();
    const controller = new AbortController();
    const call = settle(dep.request({ path: '/', signal: controller.signal }));
    await flush();
    clock.advance(20);
    controller.abort();
    expect(isPrazoError((await call).error, 'CANCELLED')).toBe(true);
    expect(dep.overload().concurrency).toMatchObject({ limit: 8, drops: 0, inFlight: 0, abandoned: 1 });
    await advance(clock, 150);
    expect(dep.overload().concurrency).toMatchObject({ abandoned: 0 });
    await dep.close();
  });

  it('refuses at once a call that finds no slot free while the dependency has answered nothing for two read timeouts', async () => {
    // Eight calls in flight that the dependency does not answer (with lastAttempt 'deadline' the
    // only attempt waits to the deadline): after 2 × 140 ms of silence a call finding no free slot
    // would wait only for one of them to time out, holding its caller meanwhile.
    const t = createTestDependency({
      origins: ONE,
      hedge: false,
      attempts: 1,
      lastAttempt: 'deadline',
      concurrency: { minLimit: 2, initialLimit: 8, windowSamples: 1, windowMs: 10 },
    });
    const { dep, clock, transport } = t;
    await probeAt(5, t);
    const hung = Array.from({ length: 8 }, (_, i) => settle(dep.request({ path: `/hung/${i}` })));
    await flush();
    await advance(clock, 100);
    // 100 ms of silence: a call waits, as before.
    const early = settle(dep.request({ path: '/early' }));
    await flush();
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 8, queued: 1 });
    await advance(clock, 200);
    const late = await settle(dep.request({ path: '/late' }));
    expect(isPrazoError(late.error, 'CONCURRENCY_LIMITED')).toBe(true);
    expect((late.error as Error).message).toMatch(/answered nothing for 30\d ms with calls in flight/);
    expect(transport.exchanges.some((e) => e.path === '/late')).toBe(false);
    // It never reached the dependency: the budget counts it as refused, not as an original.
    expect(dep.budget()).toMatchObject({ originals: 11, refused: 1 });
    // One answer ends the silence: a call that finds no slot free waits again (the answer's 300 ms
    // also cut the limit below the seven calls still in flight).
    transport.pending()[0]!.respond(200);
    expect((await hung[0])!.value?.status).toBe(200);
    const after = settle(dep.request({ path: '/after' }));
    await flush();
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 7, queued: 2 });
    await dep.close();
    await Promise.all([...hung, early, after]);
  });

  it('counts a silence only while calls are outstanding: a burst after a quiet spell waits for its slots', async () => {
    const { dep, clock, transport } = await probed();
    // The last answer was a minute ago; nothing has been outstanding since.
    clock.advance(60_000);
    const calls = Array.from({ length: 9 }, (_, i) => settle(dep.request({ path: `/burst/${i}` })));
    await flush();
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 8, queued: 1 });
    for (let i = 0; i < 9; i++) {
      clock.advance(5);
      transport.pending()[0]!.respond(200);
      await flush();
    }
    for (const call of calls) expect((await call).value?.status).toBe(200);
    await dep.close();
  });

  it('holds no slot for an attempt that never reached the dependency (connect failure)', async () => {
    const { dep, transport } = await probed();
    const call = settle(dep.request({ path: '/' }));
    await flush();
    transport.pending()[0]!.fail(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await call;
    expect(dep.overload().concurrency).toMatchObject({ limit: 8, drops: 0, abandoned: 0 });
    await dep.close();
  });
});

describe('adaptive throttling (throttle step)', () => {
  it('rejects calls locally with THROTTLED once the dependency accepts too few; they count as refused', async () => {
    const { dep, transport, clock } = createTestDependency(
      { origins: ONE, throttle: { k: 2 }, attempts: 1, random: () => 0 },
      (e) => e.respond(503),
    );
    const limited: DependencyEvents['limited'][] = [];
    dep.on('limited', (e) => limited.push(e));
    const results = [];
    for (let i = 0; i < 10; i++) {
      results.push(await settle(dep.request({ path: '/' })));
      clock.advance(10);
    }
    // The first call is sent (no history yet); after it the probability is 1/2, and random() = 0.
    expect(results[0]!.value?.status).toBe(503);
    expect(results.slice(1).every((r) => isPrazoError(r.error, 'THROTTLED'))).toBe(true);
    expect(transport.exchanges).toHaveLength(1);
    expect(limited[0]).toMatchObject({ reason: 'throttle', probability: 0.5 });
    expect(dep.budget()).toMatchObject({ originals: 1, refused: 9 });
    // The rejected calls never reached the dependency: they are not counted (see countRejected).
    expect(dep.overload().throttle).toEqual({ requests: 1, accepts: 0, probability: 1 / 2 });
    await dep.close();
  });

  it('counts a 404 or a 500 as accepted, a 429, a timeout or a refused connection as not, a cancelled call not at all', async () => {
    let status = 404;
    const { dep, transport, clock } = createTestDependency(
      { origins: ONE, throttle: true, attempts: 1, random: () => 0.99 },
      (e) => (status === 0 ? undefined : e.respond(status)),
    );
    for (const s of [404, 500, 429]) {
      status = s;
      await settle(dep.request({ path: '/' }));
    }
    expect(dep.overload().throttle).toMatchObject({ requests: 3, accepts: 2 });
    status = 0;
    const timedOut = settle(dep.request({ path: '/' }));
    await advance(clock, 1100);
    expect(isPrazoError((await timedOut).error)).toBe(true);
    const controller = new AbortController();
    const cancelled = settle(dep.request({ path: '/', signal: controller.signal }));
    await flush();
    controller.abort();
    await cancelled;
    const refused = settle(dep.request({ path: '/' }));
    await flush();
    transport.pending()[0]!.fail(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await refused;
    expect(dep.overload().throttle).toMatchObject({ requests: 5, accepts: 2 });
    await dep.close();
  });

  it('counts a call whose timed-out attempt was retried and answered as not accepted', async () => {
    const { dep, transport, clock } = createTestDependency({
      origins: ONE,
      hedge: false,
      throttle: true,
      attempts: 2,
      random: () => 0.99,
    });
    const call = settle(dep.request({ path: '/' }));
    await flush();
    await advance(clock, 145);
    // The retry, after its backoff.
    for (let i = 0; i < 40 && transport.pending().length === 0; i++) await advance(clock, 5);
    expect(transport.pending()).toHaveLength(1);
    transport.pending()[0]!.respond(200);
    expect((await call).value?.status).toBe(200);
    expect(dep.overload().throttle).toMatchObject({ requests: 1, accepts: 0 });
    await dep.close();
  });

  it('is off by default, and refuses unusable options naming them', () => {
    const { dep } = createTestDependency();
    expect(dep.overload()).toEqual({ concurrency: null, throttle: null });
    for (const [options, option] of [
      [{ concurrency: 'yes' }, 'concurrency'],
      [{ concurrency: { minLimit: 0 } }, 'concurrency.minLimit'],
      [{ concurrency: { maxQueued: -1 } }, 'concurrency.maxQueued'],
      [{ throttle: { k: 0.5 } }, 'throttle.k'],
      [{ throttle: 1 }, 'throttle'],
    ] as const) {
      expect(() => createTestDependency(options as never), option).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option }),
      );
    }
  });
});
