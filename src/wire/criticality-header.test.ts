import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRITICALITY_HEADER, CRITICALITY_LEVELS, parseCriticality } from './criticality-header.js';

describe('criticality header', () => {
  it('is named x-criticality', () => {
    expect(CRITICALITY_HEADER).toBe('x-criticality');
  });

  it('reads the three levels whatever their case and surrounding whitespace', () => {
    expect(parseCriticality('critical')).toBe('critical');
    expect(parseCriticality(' CRITICAL\t')).toBe('critical');
    expect(parseCriticality('Sheddable')).toBe('sheddable');
    expect(parseCriticality('default')).toBe('default');
  });

  it('reads a missing, empty or unknown value as default', () => {
    for (const value of [undefined, null, '', ' ', 'critical-plus', 'high', '1', 42, {}, []])
      expect(parseCriticality(value)).toBe('default');
  });

  it('takes the first value of a repeated header', () => {
    expect(parseCriticality(['sheddable', 'critical'])).toBe('sheddable');
    expect(parseCriticality([42, 'critical'])).toBe('default');
  });

  it('never throws and always answers one of the levels, for any input', () => {
    const input = fc.oneof(
      fc.anything(),
      fc.string(),
      fc.array(fc.string(), { maxLength: 3 }),
      fc
        .tuple(fc.constantFrom(...CRITICALITY_LEVELS), fc.constantFrom('', ' ', '\t'), fc.boolean())
        .map(([level, pad, upper]) => pad + (upper ? level.toUpperCase() : level) + pad),
    );
    fc.assert(
      fc.property(input, (value) => {
        expect(CRITICALITY_LEVELS).toContain(parseCriticality(value));
      }),
    );
  });

  it('reads back every level it writes', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CRITICALITY_LEVELS), (level) => {
        expect(parseCriticality(level)).toBe(level);
      }),
    );
  });
});
