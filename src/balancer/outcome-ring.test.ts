import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failuresIn, OUTCOME_RING_MAX, pushOutcome } from './outcome-ring.js';

describe('outcome ring', () => {
  it('counts the failures among the last `size` outcomes, like an array would', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: OUTCOME_RING_MAX }),
        fc.array(fc.boolean(), { maxLength: 100 }),
        (size, outcomes) => {
          let bits = 0;
          for (const failed of outcomes) bits = pushOutcome(bits, failed, size);
          expect(failuresIn(bits)).toBe(outcomes.slice(-size).filter(Boolean).length);
        },
      ),
    );
  });

  it('counts all 32 bits, the sign bit included', () => {
    expect(failuresIn(-1)).toBe(32);
    expect(failuresIn(0x80000000 | 0)).toBe(1);
    expect(failuresIn(0)).toBe(0);
  });
});
