/**
 * Soak on real timers: what callWithDeadline and Deadline arm, they disarm. Counts Node's active
 * `Timeout` resources and the abort listeners left on the caller's signal before and after.
 *
 * prazo unrefs its timers, and `process.getActiveResourcesInfo()` lists only ref'ed ones, so the soak
 * runs on a clock over Node's real timers whose `unref()` is withheld: every pending timer stays visible.
 */
import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  type Clock,
  callWithDeadline,
  Deadline,
  type DeadlineCallContext,
  isPrazoError,
  systemClock,
} from '../src/index.js';

const activeTimeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

let unrefCalls = 0;
/** Real timers, but `unref()` only counted, not applied, so `getActiveResourcesInfo()` sees them all. */
const visible: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => {
    const timer = systemClock.setTimeout(callback, delayMs);
    return { timer, unref: () => ++unrefCalls } as never;
  },
  clearTimeout: (handle) => systemClock.clearTimeout((handle as unknown as { timer: never }).timer),
};

const hang = ({ signal }: DeadlineCallContext): Promise<never> =>
  new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(new Error('socket aborted')), { once: true });
  });

describe('no timer or listener survives (real clock)', () => {
  it('after 10 000 completed, 10 000 cancelled and 10 000 expired calls', async () => {
    const caller = new AbortController();
    setMaxListeners(0, caller.signal);
    const before = activeTimeouts();
    const counts = { completed: 0, cancelled: 0, expired: 0 };

    for (let i = 0; i < 10_000; i++) {
      await callWithDeadline(Deadline.after(60_000, visible), {
        name: 'dep',
        p99Ms: 10,
        signal: caller.signal,
        run: async () => counts.completed++,
      });
    }
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(activeTimeouts()).toBeLessThanOrEqual(before);

    for (let batch = 0; batch < 10; batch++) {
      const own = new AbortController();
      setMaxListeners(0, own.signal);
      const calls = Array.from({ length: 1000 }, () =>
        callWithDeadline(Deadline.after(60_000, visible), {
          name: 'dep',
          p99Ms: 10,
          signal: own.signal,
          run: hang,
        }).catch((e: unknown) => isPrazoError(e, 'CANCELLED') && counts.cancelled++),
      );
      own.abort();
      await Promise.all(calls);
      expect(getEventListeners(own.signal, 'abort')).toHaveLength(0);
    }
    expect(activeTimeouts()).toBeLessThanOrEqual(before);

    for (let batch = 0; batch < 10; batch++) {
      const calls = Array.from({ length: 1000 }, () =>
        callWithDeadline(Deadline.after(30, visible), {
          name: 'dep',
          p99Ms: 0,
          signal: caller.signal,
          run: hang,
        }).catch((e: unknown) => {
          // A machine busy enough to stall 30 ms between creating the deadline and calling makes the
          // call fail fast instead: also an end by the deadline, also with nothing armed.
          if (isPrazoError(e, 'DEADLINE_EXCEEDED') || isPrazoError(e, 'DEADLINE_INSUFFICIENT'))
            counts.expired++;
        }),
      );
      await Promise.all(calls);
    }

    expect(counts).toEqual({ completed: 10_000, cancelled: 10_000, expired: 10_000 });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(activeTimeouts()).toBeLessThanOrEqual(before);
  }, 60_000);

  it('after 10 000 deadlines whose signal was read and then disposed', () => {
    const before = activeTimeouts();
    for (let i = 0; i < 10_000; i++) {
      const deadline = Deadline.after(60_000, visible);
      void deadline.signal;
      deadline.dispose();
    }
    expect(activeTimeouts()).toBeLessThanOrEqual(before);
  });

  it('unrefs every timer it arms, so that a pending deadline never keeps the process alive', async () => {
    const before = unrefCalls;
    void Deadline.after(60_000, visible).signal;
    await callWithDeadline(Deadline.after(60_000, visible), { name: 'dep', p99Ms: 1, run: async () => 1 });
    expect(unrefCalls - before).toBe(2);
    const real = Deadline.after(60_000);
    const refed = activeTimeouts();
    void real.signal;
    expect(activeTimeouts()).toBe(refed);
    real.dispose();
  });
});
