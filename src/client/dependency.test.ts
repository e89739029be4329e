import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DependencyEvents } from '../engine/events.js';
import { isPrazoError } from '../errors.js';
import { createRetryBudget } from '../policy/retry-budget.js';
import { createFakeClock } from '../testing/fake-clock.js';
import {
  advance,
  createTestDependency,
  flush,
  TEST_START_MS as START,
  settle,
} from '../testing/test-dependency.js';
import { TRANSPORT_MARGIN_MS } from '../transport/transport.js';

const setup = createTestDependency;

describe('dependency() calibration and policy', () => {
  it('calibrates connect and read timeouts from the static p99 and reports where each figure comes from', async () => {
    const { dep } = setup();
    expect(dep.policy()).toEqual({
      connectMs: 140,
      readMs: 140,
      attempts: 2,
      warning: null,
      p95Ms: 50,
      p99Ms: 100,
      sources: { p95: 'static', p99: 'static' },
    });
    await dep.close();
  });

  it("starts 'auto' from the largest p99 whose attempts fit the deadline, marked as a start value", async () => {
    const { dep } = setup({ latency: 'auto' });
    const policy = dep.policy();
    expect(policy.p99Ms).toBe(335); // (1000 / 2 − 30) / 1.4
    expect(policy.attempts).toBe(2);
    expect(policy.warning).toBeNull();
    expect(policy.sources).toEqual({ p95: 'start', p99: 'start' });
    await dep.close();
    const started = setup({ latency: { auto: true, startP99Ms: 80, startP95Ms: 30 } });
    expect(started.dep.policy()).toMatchObject({ p95Ms: 30, p99Ms: 80, readMs: 112 });
    await started.dep.close();
  });

  it('names the option that is wrong', () => {
    expect(() => setup({ origins: ['ftp://x'] })).toThrow(/origins\[0\]/);
    expect(() => setup({ userDeadlineMs: -1 })).toThrow(/userDeadlineMs/);
    expect(() => setup({ hedge: { at: 'p50' as 'p95' } })).toThrow(/hedge\.at/);
    expect(() => setup({ latency: { p99Ms: 10, p95Ms: 20 } })).toThrow(/latency\.p95Ms/);
  });

  it('replaces the static p95/p99 with live ones once the healthy window holds enough samples', async () => {
    const { dep, clock } = setup({ liveMinSamples: 50 }, (e) => {
      clock.advance(7);
      e.respond(200);
    });
    const changes: DependencyEvents['policy'][] = [];
    dep.on('policy', (e) => changes.push(e));
    for (let i = 0; i < 120; i++) {
      const res = await dep.request({ path: '/stock' });
      await res.body.dump();
      clock.advance(20);
    }
    const policy = dep.policy();
    expect(policy.sources).toEqual({ p95: 'live', p99: 'live' });
    expect(policy.p99Ms).toBeCloseTo(7, 0);
    expect(policy.readMs).toBe(140); // timeouts move only through recalibrate()/setPolicy()
    expect(changes.length).toBeGreaterThan(0);
    expect(dep.recalibrate(policy.p99Ms).readMs).toBe(10);
    expect(dep.policy().readMs).toBe(10);
    await dep.close();
  });
});

describe('dependency() live figures under an incident', () => {
  it('keeps a calibrated p99 in force through a window of slow answers: the pre-call check still sends what fits it', async () => {
    // Calibrated p99 100 ms; then every answer takes 300 ms (a capacity drop), waited for past the
    // 140 ms read timeout (one attempt, lastAttempt 'deadline').
    const { dep, clock, transport } = setup({ liveMinSamples: 20, attempts: 1, lastAttempt: 'deadline' });
    for (let i = 0; i < 60; i++) {
      const pending = settle(dep.request({ path: '/slow' }));
      await advance(clock, 300);
      transport.pending()[0]!.respond(200);
      expect((await pending).value?.status).toBe(200);
    }
    // Those answers are the incident, not the dependency's healthy p99 (more than 2 × the calibrated);
    // the p95, the hedge delay, follows them.
    expect(dep.policy()).toMatchObject({ p99Ms: 100, sources: { p99: 'static', p95: 'live' } });
    expect(dep.policy().p95Ms).toBeGreaterThan(250);
    // A call with 250 ms left fits the calibrated p99 and is sent; with the incident's p99 in force
    // it would have been refused (DEADLINE_INSUFFICIENT) untouched.
    const fits = settle(dep.request({ path: '/fits', deadline: { limitMs: clock.now() + 250 } }));
    await flush();
    expect(transport.pending()).toHaveLength(1);
    transport.pending()[0]!.respond(200);
    expect((await fits).value?.status).toBe(200);
    // Answers within twice the calibrated p99 are a drift the live figures follow.
    clock.advance(60_000);
    for (let i = 0; i < 60; i++) {
      const pending = settle(dep.request({ path: '/drift' }));
      await advance(clock, 130);
      transport.pending()[0]!.respond(200);
      await pending;
    }
    expect(dep.policy().sources.p99).toBe('live');
    expect(dep.policy().p99Ms).toBeGreaterThan(100);
    await dep.close();
  });
});

describe('dependency() attempts', () => {
  it('sends the absolute deadline and the attempt header on every attempt', async () => {
    const { dep, transport } = setup({}, (e) => e.respond(200, {}, 'ok'));
    const res = await dep.request({ path: '/stock/1', deadline: { limitMs: START + 900 } });
    expect(await res.body.text()).toBe('ok');
    expect(transport.exchanges[0]!.headers).toMatchObject({
      'x-deadline-epoch-ms': String(START + 900),
      'x-prazo-attempt': '1;kind=original',
    });
    await dep.close();
  });

  it('caps a deadline beyond localMaxMs', async () => {
    const { dep, transport } = setup({ localMaxMs: 500 }, (e) => e.respond(200));
    await dep.request({ path: '/', deadline: { limitMs: START + 60_000 } });
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(START + 500));
    await dep.close();
  });

  it('returns a 404 after one attempt', async () => {
    const { dep, transport } = setup({}, (e) => e.respond(404));
    const res = await dep.request({ path: '/missing' });
    expect(res.status).toBe(404);
    expect(transport.exchanges).toHaveLength(1);
    await dep.close();
  });

  it('retries a 503 on the other instance and returns the success', async () => {
    const { dep, clock, transport } = setup({}, (e) =>
      e.headers['x-prazo-attempt'] === '1;kind=original' ? e.respond(503) : e.respond(200),
    );
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 200);
    const { value } = await pending;
    expect(value!.status).toBe(200);
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=retry',
    ]);
    expect(transport.exchanges[0]!.instance).not.toBe(transport.exchanges[1]!.instance);
    expect(transport.exchanges[0]!.bodyConsumed).toBe(true); // the discarded 503 was drained
    expect(value!.attempts.map((a) => a.status)).toEqual([503, 200]);
    await dep.close();
  });

  it('returns the last 503 when no attempt is left', async () => {
    const { dep, clock, transport } = setup({}, (e) => e.respond(503));
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 300);
    expect((await pending).value!.status).toBe(503);
    expect(transport.exchanges).toHaveLength(2);
    await dep.close();
  });

  it('fails with DEADLINE_INSUFFICIENT and never touches the dependency when the deadline cannot hold the p99', async () => {
    const { dep, transport } = setup();
    const fastFails: unknown[] = [];
    dep.on('fast-fail', (e) => fastFails.push(e));
    const { error } = await settle(dep.request({ path: '/', deadline: { limitMs: START + 60 } }));
    expect(isPrazoError(error, 'DEADLINE_INSUFFICIENT')).toBe(true);
    expect(error).toMatchObject({ remainingMs: 60, requiredMs: 100, attempts: [] });
    expect(transport.exchanges).toHaveLength(0);
    expect(fastFails).toEqual([
      { dependency: 'inventory', requestId: 1, remainingMs: 60, requiredMs: 100, beforeAttempt: true },
    ]);
    await dep.close();
  });

  it('cuts each attempt at the read timeout and fails with READ_TIMEOUT after the calibrated attempts', async () => {
    const { dep, clock, transport } = setup();
    const pending = settle(dep.request({ path: '/slow' }));
    await advance(clock, 600);
    const { error } = await pending;
    expect(isPrazoError(error, 'READ_TIMEOUT')).toBe(true);
    expect(transport.exchanges).toHaveLength(2);
    const attempts = (error as { attempts: { durationMs: number; errorCode: string }[] }).attempts;
    expect(attempts.map((a) => a.errorCode)).toEqual(['READ_TIMEOUT', 'READ_TIMEOUT']);
    for (const a of attempts) expect(a.durationMs).toBeLessThanOrEqual(140 + 5);
    clock.advance(5); // the shared timer stops on the tick after the last attempt
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it('sets the transport’s own timers a second past its bound, never before it (undici’s coarse timers fire early)', async () => {
    const plain = setup();
    const call = settle(plain.dep.request({ path: '/' }));
    await flush();
    const [first] = plain.transport.exchanges;
    expect(first!.timeoutMs).toBe(140);
    expect(first!.transportTimeoutMs).toBe(140 + TRANSPORT_MARGIN_MS);
    first!.respond(200);
    await call;
    await plain.dep.close();
    // An attempt that may wait for the deadline (1 000 ms): the net is past the deadline.
    const waiting = setup({ lastAttempt: 'deadline' });
    const post = settle(waiting.dep.request({ method: 'POST', path: '/orders', body: '{}' }));
    await flush();
    expect(waiting.transport.exchanges[0]!.transportTimeoutMs).toBe(1_000 + TRANSPORT_MARGIN_MS);
    expect(TRANSPORT_MARGIN_MS).toBeGreaterThanOrEqual(1_000);
    waiting.transport.exchanges[0]!.respond(201);
    await post;
    await waiting.dep.close();
  });

  it("with lastAttempt 'deadline', sends the retry beside an attempt at its read timeout: the attempt keeps its place and waits, the first answer wins", async () => {
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline' });
    const retries: DependencyEvents['retry'][] = [];
    dep.on('retry', (e) => retries.push(e));
    // A queueing dependency: nothing answers within the 140 ms read timeout.
    const pending = settle(dep.request({ path: '/queued' }));
    await advance(clock, 200);
    // At 140 ms the retry went to the other instance, beside the first attempt, which was not cut.
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=retry',
    ]);
    expect(transport.exchanges[1]!.instance).not.toBe(transport.exchanges[0]!.instance);
    expect(transport.pending()).toHaveLength(2);
    expect(retries).toMatchObject([{ reason: 'read-timeout', delayMs: 0, anotherInstance: true }]);
    // Its place in the queue comes first: the first attempt answers, and the retry is called off.
    await advance(clock, 300);
    transport.exchanges[0]!.respond(200);
    const { value } = await pending;
    expect(value?.status).toBe(200);
    expect(transport.pending()).toHaveLength(0);
    expect(value?.attempts.find((a) => a.attempt === 1)).toMatchObject({ outcome: 'success', status: 200 });
    // The retry's instance answers first: it wins, and the first attempt is called off.
    const second = settle(dep.request({ path: '/queued' }));
    await advance(clock, 200);
    const [first, beside] = transport.pending();
    beside!.respond(200);
    expect((await second).value?.status).toBe(200);
    expect(first!.settled).toBe(true);
    // A hung one: both copies end at the deadline, and nothing else is sent (two attempts).
    const before = transport.exchanges.length;
    const hung = settle(dep.request({ path: '/hung' }));
    await advance(clock, 1_100);
    const { error } = await hung;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect(transport.exchanges.length - before).toBe(2);
    // A POST is never resent: its only attempt is the last, from the start.
    const post = settle(dep.request({ method: 'POST', path: '/orders', body: '{}' }));
    await advance(clock, 300);
    expect(transport.pending()).toHaveLength(1);
    transport.pending()[0]!.respond(201);
    expect((await post).value?.status).toBe(201);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it("with lastAttempt 'deadline', counts the retry sent beside an attempt as one of the call's attempts", async () => {
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline', attempts: 2 });
    const pending = settle(dep.request({ path: '/queued' }));
    await advance(clock, 200);
    // Both copies fail with a retryable 503: the call had its two attempts, no third is sent.
    for (const e of transport.pending()) e.respond(503);
    await advance(clock, 300);
    expect((await pending).value?.status).toBe(503);
    expect(transport.exchanges).toHaveLength(2);
    // With three attempts the third is a retry after the try.
    const three = setup({ lastAttempt: 'deadline', attempts: 3, userDeadlineMs: 2_000 });
    const call = settle(three.dep.request({ path: '/queued' }));
    await advance(three.clock, 200);
    for (const e of three.transport.pending()) e.respond(503);
    await advance(three.clock, 300);
    expect(three.transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=retry',
      '3;kind=retry',
    ]);
    three.transport.pending()[0]!.respond(200);
    expect((await call).value?.status).toBe(200);
    await dep.close();
    await three.dep.close();
  });

  it("with lastAttempt 'deadline', cuts a PUT at its read timeout for its retry (a PUT is never twice in flight), and cuts when the only instance left is the attempt's", async () => {
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline' });
    const pending = settle(dep.request({ method: 'PUT', path: '/stock/1', body: '{}' }));
    await advance(clock, 200);
    expect(transport.exchanges).toHaveLength(2);
    expect(transport.pending()).toHaveLength(1);
    transport.pending()[0]!.respond(200);
    const { value } = await pending;
    expect(value?.attempts.map((a) => a.errorCode ?? 'answered')).toEqual(['READ_TIMEOUT', 'answered']);
    await dep.close();
    // One instance: no other to send a copy to; the attempt is cut for its retry, as before.
    const one = setup({ lastAttempt: 'deadline', origins: ['http://10.0.0.1:80'] });
    const sole = settle(one.dep.request({ path: '/queued' }));
    await advance(one.clock, 200);
    expect(one.transport.exchanges).toHaveLength(2);
    expect(one.transport.pending()).toHaveLength(1);
    one.transport.pending()[0]!.respond(200);
    expect((await sole).value?.status).toBe(200);
    await one.dep.close();
  });

  it("with lastAttempt 'deadline', lets both copies of a hedged try no retry can follow wait, the first answer winning", async () => {
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline', attempts: 1, hedge: { at: 'p95' } });
    const pending = settle(dep.request({ path: '/slow' }));
    await advance(clock, 100);
    // The hedge copy went out at the p95 (50 ms): two copies of the one try.
    expect(transport.exchanges).toHaveLength(2);
    // Past the 140 ms read timeout both copies still wait; the hedge copy answers first.
    await advance(clock, 200);
    expect(transport.pending()).toHaveLength(2);
    transport.pending()[1]!.respond(200);
    const { value } = await pending;
    expect(value?.status).toBe(200);
    expect(value?.attempts.map((a) => a.kind)).toContain('hedge');
    // A hung dependency: both copies end at the deadline.
    const hung = settle(dep.request({ path: '/hung' }));
    await advance(clock, 1_100);
    expect(isPrazoError((await hung).error, 'DEADLINE_EXCEEDED')).toBe(true);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it("with lastAttempt 'deadline', still cuts an attempt at the read timeout when the retry budget can grant a retry", async () => {
    const { dep, clock, transport } = setup({
      lastAttempt: 'deadline',
      attempts: 2,
      retryBudget: { maxRatio: 0, minPerSecond: 0 },
    });
    // No retry can be granted: even the first attempt waits.
    const pending = settle(dep.request({ path: '/queued' }));
    await advance(clock, 300);
    expect(transport.exchanges).toHaveLength(1);
    transport.pending()[0]!.respond(200);
    expect((await pending).value?.status).toBe(200);
    expect(() => setup({ lastAttempt: 'never' as 'deadline' })).toThrow(/lastAttempt/);
    await dep.close();
  });

  it("with lastAttempt 'deadline', sends no retry at the read timeout while most attempts outlast it, and sends it again once they do not", async () => {
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline', attempts: 2 });
    const call = async (waitMs: number): Promise<number> => {
      const before = transport.exchanges.length;
      const pending = settle(dep.request({ path: '/queued' }));
      await advance(clock, waitMs);
      transport.pending()[0]!.respond(200);
      expect((await pending).value?.status).toBe(200);
      return transport.exchanges.length - before;
    };
    // The whole dependency queues: every answer comes after the 140 ms read timeout. At first a
    // retry is sent beside the first attempt at its read timeout…
    expect(await call(450)).toBe(2);
    let sent = 2;
    for (let i = 0; i < 20 && sent === 2; i++) sent = await call(450);
    // …until most recent attempts outlast the read timeout: a retry would queue behind this
    // attempt's work, so the first attempt waits too.
    expect(sent).toBe(1);
    expect(await call(450)).toBe(1);
    // Quick answers again: once most attempts end within the read timeout, a slow one gets its retry.
    for (let i = 0; i < 30; i++) expect(await call(10)).toBe(1);
    expect(await call(450)).toBe(2);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it('sends no hedge copy while most attempts outlast the read timeout (the dependency is slow as a whole)', async () => {
    const { dep, clock, transport } = setup({ attempts: 1, hedge: { at: 'p95' } });
    const slowCall = async (): Promise<number> => {
      const before = transport.exchanges.length;
      const pending = settle(dep.request({ path: '/slow' }));
      await advance(clock, 200);
      await pending;
      return transport.exchanges.length - before;
    };
    // Nothing answers within the 140 ms read timeout: at first every try is hedged at the p95…
    expect(await slowCall()).toBe(2);
    let sent = 2;
    for (let i = 0; i < 10 && sent === 2; i++) sent = await slowCall();
    // …until most recent attempts outlasted it: a copy would only wait in the same queue.
    expect(sent).toBe(1);
    // Answers within the read timeout again: once they are most of the recent attempts, a slow
    // try is hedged again.
    for (let i = 0; i < 30; i++) {
      const pending = settle(dep.request({ path: '/quick' }));
      await advance(clock, 10);
      transport.pending()[0]!.respond(200);
      expect((await pending).value?.status).toBe(200);
    }
    expect(await slowCall()).toBe(2);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it("with lastAttempt 'deadline', takes the retry from the budget when it cuts an attempt, so attempts timing out together are not cut for retries the budget then refuses", async () => {
    // A budget with one retry left, shared by two calls whose attempts time out together.
    let left = 1;
    const budget = {
      ...createRetryBudget(),
      tryConsume: () => {
        if (left === 0) return false;
        left--;
        return true;
      },
    };
    const { dep, clock, transport } = setup({ lastAttempt: 'deadline', attempts: 2, retryBudget: budget });
    const a = settle(dep.request({ path: '/a' }));
    const b = settle(dep.request({ path: '/b' }));
    await advance(clock, 400);
    // One attempt was cut and retried; the other, with no retry left for it, kept waiting.
    expect(transport.exchanges.map((e) => e.path).sort()).toEqual(['/a', '/a', '/b']);
    for (const e of transport.pending()) e.respond(200);
    expect((await a).value?.status).toBe(200);
    expect((await b).value?.status).toBe(200);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it('ends the attempt at the deadline with DEADLINE_EXCEEDED when the deadline comes before the read timeout', async () => {
    const { dep, clock } = setup();
    const pending = settle(dep.request({ path: '/', deadline: { limitMs: START + 120 } }));
    await advance(clock, 200);
    const { error } = await pending;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect((error as { attempts: unknown[] }).attempts).toHaveLength(1);
    await dep.close();
  });

  it('never sends a POST twice after a read-phase failure', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const { dep, clock, transport } = setup({}, (e) => e.fail(reset));
    const pending = settle(dep.request({ method: 'POST', path: '/orders', body: '{}' }));
    await advance(clock, 50);
    const { error } = await pending;
    expect(isPrazoError(error, 'REQUEST_FAILED')).toBe(true);
    expect((error as Error).cause).toBe(reset);
    expect((error as Error).message).toMatch(/not idempotent/);
    expect(transport.exchanges).toHaveLength(1);
    await dep.close();
  });

  it('retries a POST whose connect was refused, at once, on the other instance', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { dep, transport } = setup({}, (e) => (e.instance === 0 ? e.fail(refused) : e.respond(201)));
    const res = await dep.request({ method: 'POST', path: '/orders', body: '{}' });
    expect(res.status).toBe(201);
    expect(transport.exchanges.map((e) => e.instance)).toEqual([0, 1]);
    // The refusing instance is now passed over by the next calls too.
    await dep.request({ method: 'POST', path: '/orders', body: '{}' });
    expect(transport.exchanges.map((e) => e.instance)).toEqual([0, 1, 1]);
    await dep.close();
  });

  it('sends a stream body once and says why it was not retried', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { dep, transport } = setup({}, (e) => e.fail(refused));
    const { error } = await settle(
      dep.request({ method: 'PUT', path: '/blob', body: Readable.from(['a', 'b']) }),
    );
    expect(transport.exchanges).toHaveLength(1);
    expect((error as Error).message).toMatch(/stream/);
    await dep.close();
  });

  it('waits for Retry-After on a 429 when the deadline allows it', async () => {
    const { dep, clock, transport } = setup({ userDeadlineMs: 2_000 }, (e) =>
      e.headers['x-prazo-attempt'] === '1;kind=original'
        ? e.respond(429, { 'retry-after': '1' })
        : e.respond(200),
    );
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 990, 10);
    expect(transport.exchanges).toHaveLength(1);
    await advance(clock, 30, 5);
    expect((await pending).value!.status).toBe(200);
    expect(transport.exchanges).toHaveLength(2);
    await dep.close();
  });

  it('fails at once with RETRY_AFTER_EXCEEDS_DEADLINE when the wait does not fit', async () => {
    const { dep, transport } = setup({}, (e) => e.respond(429, { 'retry-after': '1' }));
    const { error } = await settle(dep.request({ path: '/' }));
    expect(isPrazoError(error, 'RETRY_AFTER_EXCEEDS_DEADLINE')).toBe(true);
    expect(transport.exchanges).toHaveLength(1);
    expect(transport.exchanges[0]!.bodyConsumed).toBe(true);
    await dep.close();
  });

  it('gives RETRY_AFTER_EXCEEDS_DEADLINE the refused answer as its cause and a message that says it once', async () => {
    const { dep } = setup({}, (e) => e.respond(429, { 'retry-after': '1' }));
    const { error } = await settle(dep.request({ path: '/', deadline: { limitMs: START + 599 } }));
    expect(error).toMatchObject({
      code: 'RETRY_AFTER_EXCEEDS_DEADLINE',
      retryAfterMs: 1000,
      remainingMs: 599,
    });
    const { message, cause } = error as Error;
    expect(message).toBe(
      'The server asked to retry after 1000 ms; with a p99 of 100 ms that needs 1100 ms, but only 599 ms are left before the deadline.',
    );
    expect(cause).toMatchObject({ code: 'REQUEST_FAILED', phase: 'read' });
    expect((cause as Error).message).toContain('429');
    await dep.close();
  });

  it('cancels the attempt in flight when the caller aborts, with CANCELLED', async () => {
    const { dep, clock, transport } = setup();
    const controller = new AbortController();
    const pending = settle(dep.request({ path: '/', signal: controller.signal }));
    await flush();
    controller.abort(new Error('user left'));
    const { error } = await pending;
    expect(isPrazoError(error, 'CANCELLED')).toBe(true);
    expect(transport.exchanges[0]!.settled).toBe(true);
    clock.advance(5); // the shared timer stops on the tick after the last attempt
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it('spends the shared retry budget and fails with RETRY_BUDGET_EXHAUSTED when it is empty', async () => {
    const clock0 = createFakeClock(START);
    const budget = createRetryBudget({ clock: clock0, minPerSecond: 0.1, windowMs: 10_000, maxRatio: 0.1 });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { dep } = setup({ retryBudget: budget }, (e) => e.fail(refused));
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { error } = await settle(dep.request({ path: '/' }));
      codes.push((error as { code: string }).code);
    }
    expect(codes).toContain('RETRY_BUDGET_EXHAUSTED');
    expect(dep.budget().extras).toBeLessThanOrEqual(1);
    await dep.close();
  });
});

describe('dependency() hedging', () => {
  it('sends a copy to the other instance at the p95, takes the first answer and aborts the other', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const hedges: unknown[] = [];
    const ends: DependencyEvents['attempt-end'][] = [];
    dep.on('hedge', (e) => hedges.push(e));
    dep.on('attempt-end', (e) => ends.push(e));
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 45);
    expect(transport.exchanges).toHaveLength(1);
    await advance(clock, 10);
    expect(transport.exchanges).toHaveLength(2);
    const [first, copy] = transport.exchanges;
    expect(copy!.headers['x-prazo-attempt']).toBe('2;kind=hedge');
    expect(copy!.instance).not.toBe(first!.instance);
    copy!.respond(200, {}, 'fast');
    const { value } = await pending;
    expect(await value!.body.text()).toBe('fast');
    expect(first!.settled).toBe(true); // aborted
    await flush();
    expect(hedges).toEqual([{ dependency: 'inventory', requestId: 1, afterMs: 50 }]);
    expect(ends.map((e) => [e.kind, e.outcome, e.won])).toEqual([
      ['hedge', 'success', true],
      ['original', 'aborted', false],
    ]);
    expect(dep.budget().extras).toBe(1);
    clock.advance(5); // the shared timer stops on the tick after the last attempt
    expect(clock.pendingTimers()).toBe(0);
    await dep.close();
  });

  it('waits for the other copy when one fails with a retryable error', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 60);
    const [first, copy] = transport.exchanges;
    first!.respond(503);
    await flush();
    copy!.respond(200, {}, 'copy');
    const { value } = await pending;
    expect(value!.status).toBe(200);
    expect(first!.bodyConsumed).toBe(true);
    await dep.close();
  });

  it('keeps waiting for the first copy when the hedge copy fails', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 60);
    const [first, copy] = transport.exchanges;
    copy!.respond(502);
    await flush();
    expect(first!.settled).toBe(false);
    first!.respond(200, {}, 'first');
    const { value } = await pending;
    expect(await value!.body.text()).toBe('first');
    expect(copy!.bodyConsumed).toBe(true);
    await dep.close();
  });

  it('discards the answer of a copy that arrives just after the other copy won', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const ends: DependencyEvents['attempt-end'][] = [];
    dep.on('attempt-end', (e) => ends.push(e));
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 60);
    const [first, copy] = transport.exchanges;
    first!.respond(200, {}, 'first');
    copy!.respond(200, {}, 'copy');
    const { value } = await pending;
    expect(await value!.body.text()).toBe('first');
    await flush();
    expect(copy!.bodyConsumed).toBe(true);
    expect(ends.map((e) => [e.kind, e.won])).toEqual([
      ['original', true],
      ['hedge', false],
    ]);
    await dep.close();
  });

  it('retries when both copies fail', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const pending = settle(dep.request({ path: '/' }));
    await advance(clock, 60);
    const [first, copy] = transport.exchanges;
    copy!.fail(reset);
    await flush();
    first!.respond(503);
    for (let i = 0; i < 40 && transport.exchanges.length < 3; i++) await advance(clock, 5);
    expect(transport.exchanges.length).toBe(3);
    expect(transport.exchanges[2]!.headers['x-prazo-attempt']).toBe('3;kind=retry');
    transport.exchanges[2]!.respond(200);
    expect((await pending).value!.status).toBe(200);
    await dep.close();
  });

  it('never hedges a POST without an Idempotency-Key', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } });
    const pending = settle(dep.request({ method: 'POST', path: '/', body: 'x' }));
    await advance(clock, 100);
    expect(transport.exchanges).toHaveLength(1);
    transport.exchanges[0]!.respond(200);
    await pending;
    await dep.close();
  });

  it('hedges a POST that carries an Idempotency-Key the fleet shares', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' }, idempotencyScope: 'fleet' });
    const pending = settle(
      dep.request({ method: 'POST', path: '/', body: 'x', headers: { 'Idempotency-Key': 'k1' } }),
    );
    await advance(clock, 60);
    expect(transport.exchanges).toHaveLength(2);
    transport.exchanges[1]!.respond(200);
    await pending;
    await dep.close();
  });
});

describe('dependency() hygiene', () => {
  it('leaves no timer after calls finish, and close() fails calls in flight with CANCELLED', async () => {
    const { dep, clock, transport } = setup({ hedge: { at: 'p95' } }, (e) => {
      if (e.path === '/ok') e.respond(200);
    });
    for (let i = 0; i < 20; i++) await (await dep.request({ path: '/ok' })).body.dump();
    clock.advance(5); // the shared timer stops on the tick after the last attempt
    expect(clock.pendingTimers()).toBe(0);
    const pending = settle(dep.request({ path: '/hang' }));
    await flush();
    await dep.close();
    const { error } = await pending;
    expect(isPrazoError(error, 'CANCELLED')).toBe(true);
    clock.advance(5); // the shared timer stops on the tick after the last attempt
    expect(clock.pendingTimers()).toBe(0);
    expect(transport.closed).toBe(true);
    const after = await settle(dep.request({ path: '/ok' }));
    expect(after.error).toBeInstanceOf(Error);
  });

  it('emits request and attempt events with the fields metrics need', async () => {
    const { dep } = setup({}, (e) => e.respond(200));
    const seen: Array<[string, unknown]> = [];
    dep.on('request-start', (e) => seen.push(['request-start', e]));
    dep.on('attempt-start', (e) => seen.push(['attempt-start', e]));
    dep.on('attempt-end', (e) => seen.push(['attempt-end', e]));
    dep.on('request-end', (e) => seen.push(['request-end', e]));
    await dep.request({ path: '/' });
    expect(seen).toEqual([
      [
        'request-start',
        { dependency: 'inventory', requestId: 1, method: 'GET', idempotent: true, remainingMs: 1000 },
      ],
      [
        'attempt-start',
        { dependency: 'inventory', requestId: 1, attempt: 1, kind: 'original', instance: 'http://10.0.0.1' },
      ],
      [
        'attempt-end',
        {
          dependency: 'inventory',
          requestId: 1,
          attempt: 1,
          kind: 'original',
          instance: 'http://10.0.0.1',
          durationMs: 0,
          outcome: 'success',
          status: 200,
          phase: 'response',
          won: true,
          leftMs: 1000,
        },
      ],
      [
        'request-end',
        {
          dependency: 'inventory',
          requestId: 1,
          outcome: 'success',
          status: 200,
          durationMs: 0,
          attempts: 1,
          ledger: expect.objectContaining({ dependency: 'inventory', elapsedMs: 0, budgetMs: 1000 }),
        },
      ],
    ]);
    await dep.close();
  });
});
