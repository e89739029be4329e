import { describe, expect, it } from 'vitest';
import { createFakeClock } from './fake-clock.js';

describe('fake clock', () => {
  it('fires timers in due order while advancing, and not before', () => {
    const clock = createFakeClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    const c = clock.setTimeout(() => fired.push('c'), 15);
    clock.clearTimeout(c);
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(11);
    expect(fired).toEqual(['a@1010', 'b@1020']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('runs timers scheduled by timers within the same advance', () => {
    const clock = createFakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advance(100);
    expect(fired).toEqual([5, 10]);
    expect(clock.now()).toBe(100);
  });
});
