import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { callWithDeadline, type DeadlineCallContext } from './call-with-deadline.js';
import { Deadline } from './deadline.js';

const T0 = 1_700_000_000_000;

/** A `run` that settles only when its signal aborts (rejecting with a transport-like error). */
const hang = ({ signal }: DeadlineCallContext): Promise<never> =>
  new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(new Error('socket aborted')), { once: true });
  });

describe('callWithDeadline', () => {
  it('fails fast with DEADLINE_INSUFFICIENT and never calls run when the time left cannot hold the p99', async () => {
    const clock = createFakeClock(T0);
    const deadline = Deadline.after(100, clock);
    let calls = 0;
    const failure = callWithDeadline(deadline, {
      name: 'supplier',
      p99Ms: 250,
      run: async () => {
        calls++;
      },
    });
    await expect(failure).rejects.toMatchObject({
      code: 'DEADLINE_INSUFFICIENT',
      remainingMs: 100,
      requiredMs: 250,
      dependency: 'supplier',
    });
    expect(calls).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves to what run resolves to (type-level)', async () => {
    const clock = createFakeClock(T0);
    const result = callWithDeadline(Deadline.after(100, clock), {
      name: 's',
      p99Ms: 1,
      run: async () => ({ stock: 7 }),
    });
    expectTypeOf(result).toEqualTypeOf<Promise<{ stock: number }>>();
    expect(await result).toEqual({ stock: 7 });
  });

  it('does not start a call on an expired deadline, even with a p99 of 0', async () => {
    const clock = createFakeClock(T0);
    const deadline = Deadline.after(0, clock);
    await expect(
      callWithDeadline(deadline, { name: 'x', p99Ms: 0, run: async () => 1 }),
    ).rejects.toMatchObject({
      code: 'DEADLINE_INSUFFICIENT',
    });
  });

  it('hands run the time left, an unaborted signal and the deadline header', async () => {
    const clock = createFakeClock(T0);
    const deadline = Deadline.at(T0 + 1860, clock);
    const context = await callWithDeadline(deadline, { name: 'orders', p99Ms: 250, run: async (ctx) => ctx });
    expect(context.timeoutMs).toBe(1860);
    expect(context.headers).toEqual({ 'x-deadline-epoch-ms': String(T0 + 1860) });
    expect(context.signal.aborted).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('aborts run at the deadline and rejects with DEADLINE_EXCEEDED, the transport error as cause', async () => {
    const clock = createFakeClock(T0);
    const result = callWithDeadline(Deadline.after(300, clock), { name: 'supplier', p99Ms: 250, run: hang });
    clock.advance(299);
    clock.advance(1);
    const error = await result.catch((e: unknown) => e);
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect((error as Error).cause).toEqual(new Error('socket aborted'));
    expect((error as Error).message).toContain('supplier');
  });

  it("follows the caller's signal and rejects with CANCELLED, distinct from expiry", async () => {
    const clock = createFakeClock(T0);
    const caller = new AbortController();
    const result = callWithDeadline(Deadline.after(300, clock), {
      name: 'supplier',
      p99Ms: 250,
      signal: caller.signal,
      run: hang,
    });
    caller.abort(new Error('user navigated away'));
    const error = await result.catch((e: unknown) => e);
    expect(isPrazoError(error, 'CANCELLED')).toBe(true);
    expect((error as Error).cause).toEqual(new Error('socket aborted'));
    expect(clock.pendingTimers()).toBe(0);
  });

  it('passes through the abort reason when run rejects with it', async () => {
    const clock = createFakeClock(T0);
    const result = callWithDeadline(Deadline.after(300, clock), {
      name: 'supplier',
      p99Ms: 1,
      run: ({ signal }) =>
        new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    clock.advance(300);
    const error = await result.catch((e: unknown) => e);
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect((error as Error).cause).toBeUndefined();
  });

  it('does not start when the caller has already cancelled', async () => {
    const clock = createFakeClock(T0);
    let calls = 0;
    const result = callWithDeadline(Deadline.after(300, clock), {
      name: 'supplier',
      p99Ms: 1,
      signal: AbortSignal.abort(),
      run: async () => ++calls,
    });
    await expect(result).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(calls).toBe(0);
  });

  it("leaves run's own errors untouched when nothing aborted", async () => {
    const clock = createFakeClock(T0);
    const boom = new Error('HTTP 500');
    await expect(
      callWithDeadline(Deadline.after(300, clock), { name: 's', p99Ms: 1, run: () => Promise.reject(boom) }),
    ).rejects.toBe(boom);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each([
    [{ p99Ms: -1 }, 'p99Ms'],
    [{ p99Ms: Number.NaN }, 'p99Ms'],
    [{ name: '' }, 'name'],
    [{ run: 'x' }, 'run'],
  ])('rejects bad options %j naming the option', async (override, option) => {
    const options = { name: 's', p99Ms: 1, run: async () => 1, ...override } as never;
    await expect(callWithDeadline(Deadline.after(10), options)).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option,
    });
  });

  it('leaves no timer and no listener after 10 000 completed, aborted and expired calls', async () => {
    const clock = createFakeClock(T0);
    const caller = new AbortController();
    setMaxListeners(0, caller.signal);
    const seen = { completed: 0, cancelled: 0, expired: 0 };

    for (let i = 0; i < 10_000; i++) {
      await callWithDeadline(Deadline.after(500, clock), {
        name: 's',
        p99Ms: 10,
        signal: caller.signal,
        run: async () => seen.completed++,
      });
    }

    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 10_000; i++) {
      const own = new AbortController();
      const call = callWithDeadline(Deadline.after(500, clock), {
        name: 's',
        p99Ms: 10,
        signal: own.signal,
        run: hang,
      }).catch((e: unknown) => isPrazoError(e, 'CANCELLED') && seen.cancelled++);
      own.abort();
      pending.push(call);
      expect(getEventListeners(own.signal, 'abort')).toHaveLength(0);
    }
    await Promise.all(pending);
    expect(clock.pendingTimers()).toBe(0);

    // Expire in batches: the fake clock scans its timers linearly on every firing.
    for (let batch = 0; batch < 10; batch++) {
      pending.length = 0;
      for (let i = 0; i < 1000; i++) {
        pending.push(
          callWithDeadline(Deadline.after(50 + (i % 100), clock), {
            name: 's',
            p99Ms: 10,
            signal: caller.signal,
            run: hang,
          }).catch((e: unknown) => isPrazoError(e, 'DEADLINE_EXCEEDED') && seen.expired++),
        );
      }
      expect(clock.pendingTimers()).toBe(1000);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1000);
      clock.advance(200);
      await Promise.all(pending);
    }

    expect(seen).toEqual({ completed: 10_000, cancelled: 10_000, expired: 10_000 });
    expect(clock.pendingTimers()).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  }, 60_000);
});
