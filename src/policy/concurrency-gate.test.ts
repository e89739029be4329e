import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CoarseTimer } from '../coarse-timer.js';
import { createFakeClock } from '../testing/fake-clock.js';
import {
  CONCURRENCY_MAX_QUEUED_DEFAULT,
  ConcurrencyGate,
  createConcurrencyGate,
  normalizeConcurrencyOptions,
} from './concurrency-gate.js';
import { createGradientLimit } from './gradient-limit.js';

/** A gate whose limit finished its probe at 8 with a latency of 80 ms, on a fake clock. */
function probedGate() {
  const clock = createFakeClock(0);
  const timer = new CoarseTimer(clock);
  const gate = new ConcurrencyGate(
    normalizeConcurrencyOptions({ minLimit: 2, initialLimit: 8, windowSamples: 1, windowMs: 10 }),
    () => 0.5,
    undefined,
    timer,
  );
  for (let i = 0; i < 3; i++) {
    expect(gate.tryAcquire()).toBe(true);
    clock.advance(80);
    gate.release(80, clock.now() - 80, clock.now());
  }
  expect(gate.snapshot()).toMatchObject({ limit: 8, rttMs: 80, probing: false });
  return { clock, timer, gate };
}

/** A waiting call that takes every slot it is granted and counts them. */
function countingWaiter(): { done: boolean; count: number; grant(): boolean } {
  return {
    done: false,
    count: 0,
    grant() {
      this.count++;
      return true;
    },
  };
}

describe('ConcurrencyGate, abandoned work', () => {
  it('holds a slot per abandoned attempt for about one latency, then frees a backlog at the dependency’s pace', () => {
    const { clock, gate } = probedGate();
    const now = clock.now();
    // Four attempts the callers cancelled after 5 ms: the dependency still has them.
    for (let i = 0; i < 4; i++) gate.abandon(false, 5, now - 5, now, 1_000);
    expect(gate.snapshot()).toMatchObject({ abandoned: 4, inFlight: 0, limit: 8, drops: 0 });
    // The first frees after one latency (80 ms), the next ones one per latency ÷ limit (10 ms).
    clock.advance(79);
    expect(gate.abandoned).toBe(4);
    clock.advance(6);
    expect(gate.abandoned).toBe(3);
    clock.advance(10);
    expect(gate.abandoned).toBe(2);
    clock.advance(30);
    expect(gate.abandoned).toBe(0);
  });

  it('tells the abandoned work on the instance a retry leaves from the rest, until it frees', () => {
    const { clock, gate } = probedGate();
    const now = clock.now();
    for (let i = 0; i < 7; i++) expect(gate.tryAcquire()).toBe(true);
    // Two attempts abandoned on instance 0, one on instance 1, one not placed: 7 + 4 > 8.
    gate.abandon(false, 5, now - 5, now, 1_000, 0);
    gate.abandon(false, 5, now - 5, now, 1_000, 0);
    gate.abandon(false, 5, now - 5, now, 1_000, 1);
    gate.abandon(false, 5, now - 5, now, 1_000);
    expect(gate.pastLimitWithAbandoned()).toBe(true);
    // Leaving instance 0: 7 + 2 (instance 1's and the unplaced one) > 8.
    expect(gate.pastLimitWithAbandoned(0, 0)).toBe(true);
    // One attempt about to be abandoned, and the retry leaves instance 1: 7 + 4 > 8.
    expect(gate.pastLimitWithAbandoned(1, 1)).toBe(true);
    gate.release(undefined, now, now);
    gate.release(undefined, now, now);
    // 5 in flight: 5 + 4 > 8, but leaving instance 0 counts 5 + 2; leaving 1, 5 + 3.
    expect(gate.pastLimitWithAbandoned()).toBe(true);
    expect(gate.pastLimitWithAbandoned(0, 0)).toBe(false);
    expect(gate.pastLimitWithAbandoned(0, 1)).toBe(false);
    expect(gate.pastLimitWithAbandoned(0, 5)).toBe(true);
    // The backlog frees (80 ms, then one per 10 ms): the per-instance counts with it.
    clock.advance(85);
    expect(gate.abandoned).toBe(3);
    expect(gate.pastLimitWithAbandoned(0, 0)).toBe(false);
    clock.advance(40);
    expect(gate.abandoned).toBe(0);
    expect(gate.pastLimitWithAbandoned(0, 0)).toBe(false);
    for (let i = 0; i < 3; i++) expect(gate.tryAcquire()).toBe(true);
    gate.abandon(false, 5, clock.now() - 5, clock.now(), 1_000, 0);
    // 8 in flight + 1 on instance 0: past the limit, unless the retry leaves instance 0.
    expect(gate.pastLimitWithAbandoned()).toBe(true);
    expect(gate.pastLimitWithAbandoned(0, 0)).toBe(false);
  });

  it('counts abandoned slots against the limit and hands a freed one to a waiting call', () => {
    const { clock, gate } = probedGate();
    const now = clock.now();
    for (let i = 0; i < 6; i++) expect(gate.tryAcquire()).toBe(true);
    for (let i = 0; i < 2; i++) gate.abandon(false, 5, now - 5, now, 1_000);
    expect(gate.tryAcquire()).toBe(false);
    const granted = countingWaiter();
    gate.enqueue(granted);
    clock.advance(85);
    expect(granted.count).toBe(1);
    expect(gate.snapshot()).toMatchObject({ inFlight: 7, abandoned: 1, queued: 0 });
  });

  it('holds nothing without a timer, and never longer than the cap', () => {
    const clock = createFakeClock(0);
    const untimed = new ConcurrencyGate(normalizeConcurrencyOptions({}), () => 0.5);
    untimed.abandon(false, 50, 0, 50, 1_000);
    expect(untimed.abandoned).toBe(0);
    const { gate, clock: c } = probedGate();
    gate.abandon(false, 500, c.now() - 500, c.now(), 40);
    c.advance(45);
    expect(gate.abandoned).toBe(0);
    expect(clock.now()).toBe(0);
  });

  it('frees an outage’s backlog within the cap of its last abandonment, however low the limit fell', () => {
    const { clock, gate } = probedGate();
    // A hung dependency: 40 attempts time out after 300 ms each, one every 50 ms; the limit falls
    // to its floor (2), so a backlog paced at latency ÷ limit would run for many seconds.
    for (let i = 0; i < 40; i++) {
      clock.advance(50);
      if (gate.tryAcquire()) gate.release(undefined, clock.now(), clock.now());
      gate.abandon(true, 300, clock.now() - 300, clock.now(), 300);
    }
    expect(gate.limit()).toBe(2);
    expect(gate.abandoned).toBeGreaterThan(0);
    clock.advance(300);
    expect(gate.abandoned).toBe(0);
    expect(gate.tryAcquire()).toBe(true);
  });
});

describe('createConcurrencyGate (prazo/policy)', () => {
  it('makes the gate dependency() makes from the same options, and checks them', () => {
    const made = createConcurrencyGate({ initialLimit: 7, maxQueued: 3 }, () => 0.5);
    const direct = new ConcurrencyGate(
      normalizeConcurrencyOptions({ initialLimit: 7, maxQueued: 3 }),
      () => 0.5,
    );
    expect(made.limit()).toBe(direct.limit());
    expect(made.maxQueued).toBe(3);
    expect(createConcurrencyGate().maxQueued).toBe(CONCURRENCY_MAX_QUEUED_DEFAULT);
    expect(() => createConcurrencyGate({ maxQueued: -1 })).toThrow(/maxQueued/);
  });
});

describe('ConcurrencyGate, the wait queue', () => {
  /** A full gate of limit 2 (its first probe's floor) with five waiters, the fourth cancelled; the order slots freed one by one go to them. */
  function grantOrder(order?: 'fifo' | 'adaptive-lifo'): number[] {
    const gate = createConcurrencyGate(
      order === undefined ? { minLimit: 2 } : { minLimit: 2, order },
      () => 0.5,
    );
    expect(gate.limit()).toBe(2);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(true);
    const granted: number[] = [];
    const waiters = [1, 2, 3, 4, 5].map((n) => {
      const waiter = {
        done: false,
        grant: () => {
          waiter.done = true;
          granted.push(n);
          return true;
        },
      };
      gate.enqueue(waiter);
      return waiter;
    });
    waiters[3]!.done = true;
    gate.leave();
    for (let i = 0; i < 4; i++) gate.release(undefined, 0, 0);
    expect(gate.snapshot()).toMatchObject({ inFlight: 2, queued: 0 });
    return granted;
  }

  it('serves first come first served by default', () => {
    expect(grantOrder()).toEqual([1, 2, 3, 5]);
    expect(grantOrder('fifo')).toEqual([1, 2, 3, 5]);
  });

  it("with order 'adaptive-lifo', serves the newest while more wait than the limit admits, then the first come", () => {
    // 4 waiting, limit 2: the newest (5), then 3; with 2 left, first come first served (1, 2).
    expect(grantOrder('adaptive-lifo')).toEqual([5, 3, 1, 2]);
  });

  it('keeps no departed waiter once the last waiting call got its slot', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const gate = createConcurrencyGate({ minLimit: 1 }, () => 0.5);
    expect(gate.tryAcquire()).toBe(true);
    const granted = countingWaiter();
    gate.enqueue(granted);
    // Two calls that waited behind it and left (cancelled): made and dropped in here alone.
    const departed = ((): WeakRef<object>[] =>
      [1, 2].map(() => {
        const waiter = { done: false, grant: () => true };
        gate.enqueue(waiter);
        waiter.done = true;
        gate.leave();
        return new WeakRef(waiter);
      }))();
    gate.release(undefined, 0, 0);
    expect(granted.count).toBe(1);
    expect(gate.snapshot()).toMatchObject({ inFlight: 1, queued: 0 });
    // A WeakRef keeps its target alive until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(departed.map((ref) => ref.deref())).toEqual([undefined, undefined]);
  });

  it('refuses an unknown order, naming it', () => {
    expect(() => createConcurrencyGate({ order: 'lifo' as 'fifo' })).toThrow(/order/);
  });
});

describe('ConcurrencyGate.snapshot', () => {
  it("reports every field of the limit's state and the gate's own counts", () => {
    const { gate } = probedGate();
    const limitFields = Object.keys(createGradientLimit().state());
    expect(Object.keys(gate.snapshot()).sort()).toEqual(
      [...limitFields, 'inFlight', 'abandoned', 'queued'].sort(),
    );
    expect(gate.snapshot()).toMatchObject({ limit: 8, rttMs: 80, inFlight: 0, abandoned: 0, queued: 0 });
  });
});
