import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from './errors.js';
import {
  boolean,
  integerIn,
  nonNegative,
  nonNegativeMs,
  numberIn,
  objectOption,
  pathName,
  positive,
  positiveMs,
} from './option-checks.js';

/** The error `check` throws, or undefined. */
function refusal(check: () => unknown): InvalidOptionError | undefined {
  try {
    check();
  } catch (error) {
    if (error instanceof InvalidOptionError) return error;
    throw error;
  }
  return undefined;
}

describe('the option checks', () => {
  it.each([
    [{ min: 0, max: 1 }, [0, 0.5, 1], [-0.01, 1.01, Number.NaN, '0.5', null, undefined]],
    [{ above: 0, max: 1 }, [Number.MIN_VALUE, 1], [0, -1, 2]],
    [{ min: 0, below: 1 }, [0, 0.99], [1, -1]],
    [{ above: 1 }, [1.0001, 1e300], [1, 0, Number.POSITIVE_INFINITY]],
  ] as const)('numberIn %j takes %j and refuses %j', (range, good, bad) => {
    for (const value of good) expect(numberIn('x', value, range, 'in range')).toBe(value);
    for (const value of bad)
      expect(refusal(() => numberIn('x', value, range, 'in range'))).toMatchObject({
        code: 'INVALID_OPTION',
        option: 'x',
      });
  });

  it('names the option and what it expects, in the words of the caller', () => {
    const error = refusal(() => numberIn('throttle.k', 0, { min: 1, max: 100 }, 'a number from 1 to 100'));
    expect(error?.message).toBe('Expected `throttle.k` to be a number from 1 to 100, got 0.');
    expect(error?.value).toBe(0);
  });

  it('says the usual words for positive, non-negative and integer options', () => {
    const cases: [() => unknown, string][] = [
      [() => positive('a', 0), 'a finite number > 0'],
      [() => nonNegative('a', -1), 'a finite number ≥ 0'],
      [() => positiveMs('a', Number.POSITIVE_INFINITY), 'a finite number of ms > 0'],
      [() => nonNegativeMs('a', -0.5), 'a finite number of ms ≥ 0'],
      [() => integerIn('a', 1.5, 1, 10), 'an integer from 1 to 10'],
      [() => boolean('a', 'yes'), 'a boolean'],
      [() => objectOption('a', null), 'an object'],
    ];
    for (const [check, expected] of cases)
      expect(refusal(check)?.message).toContain(`Expected \`a\` to be ${expected}, got`);
  });

  it('returns what passes, unchanged', () => {
    expect(positive('a', 3)).toBe(3);
    expect(nonNegativeMs('a', 0)).toBe(0);
    expect(integerIn('a', 10, 1, 10)).toBe(10);
    expect(integerIn('a', 7, 1, Number.POSITIVE_INFINITY)).toBe(7);
    expect(boolean('a', false)).toBe(false);
    expect(() => objectOption('a', {})).not.toThrow();
  });

  it('reports an options object by its path, or as options at the top', () => {
    expect(pathName('throttle.')).toBe('throttle');
    expect(pathName('')).toBe('options');
  });
});
