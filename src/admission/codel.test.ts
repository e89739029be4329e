import { describe, expect, it } from 'vitest';
import { CodelState } from './codel.js';

const TARGET = 5;
const INTERVAL = 100;

/** A CoDel state whose first interval starts at 0. */
function started(): CodelState {
  const codel = new CodelState(TARGET, INTERVAL);
  codel.advance(0, 0);
  return codel;
}

describe('CodelState', () => {
  it('starts not overloaded and drops nothing', () => {
    const codel = started();
    expect(codel.overloaded).toBe(false);
    expect(codel.shouldDrop(1000)).toBe(false);
  });

  it('turns overloaded when a whole interval never saw a sojourn at or below the target', () => {
    const codel = started();
    for (let t = 10; t < INTERVAL; t += 10) {
      codel.advance(t, 3);
      codel.observe(8);
    }
    expect(codel.advance(INTERVAL, 3)).toBe(true);
    expect(codel.overloaded).toBe(true);
    expect(codel.shouldDrop(6)).toBe(true);
    expect(codel.shouldDrop(5)).toBe(false);
  });

  it('stays calm through a burst: one short sojourn in the interval is enough', () => {
    const codel = started();
    codel.advance(10, 3);
    codel.observe(40);
    codel.advance(20, 3);
    codel.observe(2);
    codel.advance(30, 3);
    codel.observe(60);
    expect(codel.advance(INTERVAL, 3)).toBe(false);
    expect(codel.overloaded).toBe(false);
  });

  it('counts a queue found empty at the end of the interval as a zero sojourn', () => {
    const codel = started();
    codel.advance(10, 1);
    codel.observe(50);
    codel.advance(INTERVAL + 500, 0);
    expect(codel.overloaded).toBe(false);
  });

  it('calls an interval in which nothing left a non-empty queue overloaded', () => {
    const codel = started();
    codel.advance(INTERVAL, 4);
    expect(codel.overloaded).toBe(true);
  });

  it('recovers after an interval whose minimum sojourn is back under the target', () => {
    const codel = started();
    codel.observe(20);
    codel.advance(INTERVAL, 2);
    expect(codel.overloaded).toBe(true);
    codel.advance(INTERVAL + 10, 2);
    codel.observe(1);
    expect(codel.advance(2 * INTERVAL + 10, 2)).toBe(true);
    expect(codel.overloaded).toBe(false);
  });

  it('decides only at interval boundaries', () => {
    const codel = started();
    codel.observe(30);
    expect(codel.advance(INTERVAL - 1, 2)).toBe(false);
    expect(codel.overloaded).toBe(false);
  });
});
