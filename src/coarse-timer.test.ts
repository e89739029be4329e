import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COARSE_TICK_MS, CoarseTimer, type TimerEntry } from './coarse-timer.js';
import { createFakeClock } from './testing/fake-clock.js';

class Entry implements TimerEntry {
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  fired = 0;
  readonly id: number;
  dueAt: number;
  readonly onFire: (self: Entry, now: number) => void;
  constructor(id: number, dueAt: number, onFire: (self: Entry, now: number) => void = () => {}) {
    this.id = id;
    this.dueAt = dueAt;
    this.onFire = onFire;
  }
  onDue(now: number): void {
    this.fired++;
    this.onFire(this, now);
  }
}

type Op =
  | { op: 'add'; dueIn: number }
  | { op: 'delete'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'add-on-fire'; dueIn: number; childDueIn: number }
  | { op: 'delete-on-fire'; dueIn: number; pick: number };

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('add' as const), dueIn: fc.integer({ min: 0, max: 40 }) }),
    fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }),
    fc.record({
      op: fc.constant('add-on-fire' as const),
      dueIn: fc.integer({ min: 0, max: 40 }),
      childDueIn: fc.integer({ min: 0, max: 40 }),
    }),
    fc.record({
      op: fc.constant('delete-on-fire' as const),
      dueIn: fc.integer({ min: 0, max: 40 }),
      pick: fc.nat(),
    }),
  ),
  { maxLength: 80 },
);

describe('CoarseTimer', () => {
  it('fires every entry once, on the first tick at or after its due time, and never one that left', () => {
    fc.assert(
      fc.property(ops, (script: Op[]) => {
        const clock = createFakeClock(1_000);
        const timer = new CoarseTimer(clock);
        const waiting = new Set<Entry>(); // the model
        const all: Entry[] = [];
        let next = 0;
        const make = (dueIn: number, onFire?: (self: Entry, now: number) => void): Entry => {
          const e = new Entry(next++, clock.now() + dueIn, (self, now) => {
            // Fired on time: at or after its due time, and less than a tick late.
            expect(now).toBeGreaterThanOrEqual(self.dueAt);
            expect(now - self.dueAt).toBeLessThan(COARSE_TICK_MS + 1);
            expect(waiting.delete(self)).toBe(true);
            onFire?.(self, now);
          });
          all.push(e);
          return e;
        };
        const add = (e: Entry): void => {
          waiting.add(e);
          timer.add(e);
        };
        const remove = (e: Entry | undefined): void => {
          if (e === undefined) return;
          waiting.delete(e);
          timer.delete(e);
        };
        const pickWaiting = (n: number): Entry | undefined => [...waiting][n % Math.max(1, waiting.size)];
        for (const step of script) {
          switch (step.op) {
            case 'add':
              add(make(step.dueIn));
              break;
            case 'delete':
              remove(pickWaiting(step.pick));
              break;
            case 'advance':
              clock.advance(step.ms);
              break;
            case 'add-on-fire':
              add(make(step.dueIn, () => add(make(step.childDueIn))));
              break;
            case 'delete-on-fire':
              add(make(step.dueIn, () => remove(pickWaiting(step.pick))));
              break;
          }
          expect(timer.size).toBe(waiting.size);
          expect(new Set(timer.entries())).toEqual(waiting);
        }
        // Everything still waiting fires once its time comes; nothing fires twice.
        for (let i = 0; i < 20 && waiting.size > 0; i++) clock.advance(COARSE_TICK_MS * 4);
        expect(waiting.size).toBe(0);
        expect(timer.size).toBe(0);
        for (const e of all) expect(e.fired).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps an entry added twice once, and forgets it after delete or clear', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock);
    const a = new Entry(1, 10);
    const b = new Entry(2, 10);
    timer.add(a);
    timer.add(a);
    timer.add(b);
    expect(timer.size).toBe(2);
    timer.delete(a);
    timer.delete(a);
    expect(timer.entries()).toEqual([b]);
    expect([a.timerPrev, a.timerNext]).toEqual([null, null]);
    timer.clear();
    expect(timer.size).toBe(0);
    expect([b.timerPrev, b.timerNext]).toEqual([null, null]);
    clock.advance(50);
    expect(a.fired + b.fired).toBe(0);
    // A fresh timer takes an entry that left another one.
    const other = new CoarseTimer(clock);
    other.add(b);
    clock.advance(COARSE_TICK_MS);
    expect(b.fired).toBe(1);
  });

  it('with afterIo, sweeps after what the tick hands it runs: an entry that left in between is not called, one added in between arms the timer', () => {
    const clock = createFakeClock(0);
    // The fake stand-in for setImmediate: sweeps queue here until the test runs them ("the I/O").
    const sweeps: Array<() => void> = [];
    const timer = new CoarseTimer(clock, COARSE_TICK_MS, (sweep) => sweeps.push(sweep));
    const answered = new Entry(1, 10);
    const due = new Entry(2, 10);
    timer.add(answered);
    timer.add(due);
    clock.advance(10);
    // The ticks came due: nothing fired yet, one sweep waits per tick.
    expect(answered.fired + due.fired).toBe(0);
    expect(sweeps.length).toBeGreaterThan(0);
    // The I/O of the turn: the answer arrived, its attempt's entry leaves; a new attempt joins.
    timer.delete(answered);
    const joined = new Entry(3, 40);
    timer.add(joined);
    for (const sweep of sweeps.splice(0)) sweep();
    expect([answered.fired, due.fired, joined.fired]).toEqual([0, 1, 0]);
    // The timer is still armed for the entry that joined.
    for (let i = 0; i < 10 && joined.fired === 0; i++) {
      clock.advance(COARSE_TICK_MS);
      for (const sweep of sweeps.splice(0)) sweep();
    }
    expect(joined.fired).toBe(1);
    expect(timer.size).toBe(0);
    // Empty, the tick schedules no sweep and the timer stops.
    clock.advance(50);
    expect(sweeps).toEqual([]);
  });

  it('with afterIo, puts a sweep off when the loop stalled between the tick and the sweep, three turns in a row at most', () => {
    const clock = createFakeClock(0);
    const sweeps: Array<() => void> = [];
    const timer = new CoarseTimer(clock, COARSE_TICK_MS, (sweep) => sweeps.push(sweep));
    const answered = new Entry(1, 10);
    const late = new Entry(2, 10);
    timer.add(answered);
    timer.add(late);
    // A tick schedules its sweep; then a callback of the same turn runs 250 ms (the stall) and no
    // I/O is read before the sweep runs: the sweep waits for the next turn's I/O instead of firing.
    clock.advance(10);
    expect(sweeps).toHaveLength(1);
    // No tick is armed until the sweep runs: the clock moves on alone.
    clock.advance(250);
    expect(sweeps).toHaveLength(1);
    for (const sweep of sweeps.splice(0)) sweep();
    expect(answered.fired + late.fired).toBe(0);
    expect(sweeps).toHaveLength(1);
    // The next turn's I/O: one answer arrived during the stall. That turn stalls too, and the one
    // after it: the sweep is put off twice more, then fires what is still due, although the loop
    // stalled again (a loop that stalls every turn still times out).
    timer.delete(answered);
    for (let turn = 0; turn < 2; turn++) {
      clock.advance(100);
      for (const sweep of sweeps.splice(0)) sweep();
      expect(late.fired).toBe(0);
      expect(sweeps).toHaveLength(1);
    }
    clock.advance(100);
    for (const sweep of sweeps.splice(0)) sweep();
    expect([answered.fired, late.fired]).toEqual([0, 1]);
  });

  it('with afterIo, a short gap before a long stall still leaves the stall its put-off', () => {
    const clock = createFakeClock(0);
    const sweeps: Array<() => void> = [];
    const timer = new CoarseTimer(clock, COARSE_TICK_MS, (sweep) => sweeps.push(sweep));
    const answered = new Entry(1, 100);
    timer.add(answered);
    // The first tick's sweep runs 7 ms late (a busy machine): put off, past the next turn's I/O.
    clock.advance(COARSE_TICK_MS);
    expect(sweeps).toHaveLength(1);
    clock.advance(7);
    for (const sweep of sweeps.splice(0)) sweep();
    expect(sweeps).toHaveLength(1);
    // In that next turn a callback stalls 250 ms, past the entry's due time, while its answer
    // arrives: the sweep after the stall is put off again, and the turn after reads the answer.
    clock.advance(250);
    for (const sweep of sweeps.splice(0)) sweep();
    expect(answered.fired).toBe(0);
    timer.delete(answered);
    for (const sweep of sweeps.splice(0)) sweep();
    expect(answered.fired).toBe(0);
    expect(timer.size).toBe(0);
  });
});
