import { describe, expect, it } from 'vitest';
import { CoarseTimer, type TimerEntry } from './coarse-timer.js';
import { createFakeClock } from './testing/fake-clock.js';

describe('CoarseTimer', () => {
  it('fires an entry on the first tick at or after its due time and disarms when empty', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const fired: number[] = [];
    timer.add({ dueAt: 12, onDue: (now) => fired.push(now) });
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(10);
    expect(fired).toEqual([]);
    clock.advance(5);
    expect(fired).toEqual([15]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('holds one timer whatever the number of entries, and none a tick after they leave', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const entries = Array.from({ length: 100 }, (_, i) => ({ dueAt: 1_000 + i, onDue: () => {} }));
    for (const e of entries) timer.add(e);
    expect(clock.pendingTimers()).toBe(1);
    for (const e of entries) timer.delete(e);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('clear() disarms at once', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    timer.add({ dueAt: 100, onDue: () => {} });
    timer.clear();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps a single timer when an entry adds another while firing', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const later = { dueAt: 20, onDue: () => {} };
    timer.add({ dueAt: 5, onDue: () => timer.add(later) });
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(1);
    timer.delete(later);
    clock.advance(5);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fires the entries due on one tick in the order they joined, one that joins meanwhile included', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const fired: string[] = [];
    const late = { dueAt: 0, onDue: () => fired.push('late') };
    timer.add({ dueAt: 3, onDue: () => fired.push('a') });
    timer.add({ dueAt: 100, onDue: () => fired.push('not due') });
    timer.add({
      dueAt: 4,
      onDue: () => {
        fired.push('b');
        timer.add(late);
      },
    });
    timer.add({ dueAt: 5, onDue: () => fired.push('c') });
    clock.advance(5);
    expect(fired).toEqual(['a', 'b', 'c', 'late']);
    expect(timer.size).toBe(1);
  });

  it('does not fire an entry that another one, firing first, takes out', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const fired: string[] = [];
    const second = { dueAt: 2, onDue: () => fired.push('second') };
    timer.add({
      dueAt: 1,
      onDue: () => {
        fired.push('first');
        timer.delete(second);
      },
    });
    timer.add(second);
    timer.add({ dueAt: 3, onDue: () => fired.push('third') });
    clock.advance(5);
    expect(fired).toEqual(['first', 'third']);
    expect(timer.size).toBe(0);
  });

  it('leaves an entry that left holding no link to the entries around it, and counts it once', () => {
    const clock = createFakeClock(0);
    const timer = new CoarseTimer(clock, 5);
    const entries: TimerEntry[] = Array.from({ length: 3 }, (_, i) => ({ dueAt: 100 + i, onDue: () => {} }));
    for (const e of entries) timer.add(e);
    timer.add(entries[1]!);
    expect(timer.size).toBe(3);
    timer.delete(entries[1]!);
    timer.delete(entries[1]!);
    expect(timer.size).toBe(2);
    expect(entries[1]).toMatchObject({ timerPrev: null, timerNext: null });
    expect(timer.entries()).toEqual([entries[0], entries[2]]);
    timer.clear();
    expect(entries.map((e) => [e.timerPrev, e.timerNext])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
  });
});
