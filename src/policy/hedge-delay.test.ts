import { describe, expect, it } from 'vitest';
import { hedgeDelayMs, shouldHedge } from './hedge-delay.js';

describe('hedgeDelayMs / shouldHedge', () => {
  it('follows the live p95, or a fixed delay, or nothing', () => {
    expect(hedgeDelayMs({ at: 'p95' }, 38)).toBe(38);
    expect(hedgeDelayMs({ at: 'p95' }, undefined)).toBeUndefined();
    expect(hedgeDelayMs({ at: 25 }, 38)).toBe(25);
    expect(hedgeDelayMs(false, 38)).toBeUndefined();
  });

  it('hedges only idempotent, replayable requests whose copy can still finish in time', () => {
    const get = { idempotent: true, replayable: true };
    expect(shouldHedge(40, get, 140)).toBe(true);
    expect(shouldHedge(40, { idempotent: false, replayable: true }, 140)).toBe(false);
    expect(shouldHedge(40, { idempotent: true, replayable: false }, 140)).toBe(false);
    expect(shouldHedge(150, get, 140)).toBe(false);
    expect(shouldHedge(undefined, get, 140)).toBe(false);
  });
});
