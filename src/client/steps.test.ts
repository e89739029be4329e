import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { CoarseTimer } from './coarse-timer.js';

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
});
