import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, RETRY_AFTER_MAX_MS, readRetryAfter } from './retry-after.js';

const NOW = Date.parse('2015-10-21T07:28:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds as a wait in ms', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('3', NOW)).toBe(3000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('007', NOW)).toBe(7000);
  });

  it('reads an IMF-fixdate as the time until that instant', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:02 GMT', NOW)).toBe(2000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 08:28:00 GMT', NOW)).toBe(3_600_000);
  });

  it('rounds a date up to the next whole ms when now has a fraction', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:02 GMT', NOW + 0.25)).toBe(2000);
  });

  it('reads the obsolete RFC 850 and asctime date forms', () => {
    expect(parseRetryAfter('Wednesday, 21-Oct-15 07:28:05 GMT', NOW)).toBe(5000);
    expect(parseRetryAfter('Wed Oct 21 07:28:05 2015', NOW)).toBe(5000);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', Date.parse('1994-11-06T08:49:30Z'))).toBe(7000);
  });

  it('puts a two-digit RFC 850 year in the right century', () => {
    // 99 from 2015 is 1999 (2099 is more than 50 years ahead): a past date.
    expect(parseRetryAfter('Friday, 31-Dec-99 23:59:59 GMT', NOW)).toBe(0);
    // 16 from 2015 is 2016: too far ahead.
    expect(readRetryAfter('Friday, 21-Oct-16 07:28:00 GMT', NOW)).toEqual({ kind: 'too-long' });
  });

  it('reads a two-digit RFC 850 year more than 50 years in the future as the past century, and one within 50 years as the future (RFC 9110 §5.6.7)', () => {
    const now = Date.parse('2026-12-03T08:00:00Z');
    // 31 Dec 2076 is 50 years and 28 days ahead: more than 50 years, so 1976.
    expect(readRetryAfter('Thursday, 31-Dec-76 00:00:00 GMT', now)).toEqual({ kind: 'wait', ms: 0 });
    // 1 Dec 2076 is less than 50 years ahead: it stays in 2076 (too far for a Retry-After).
    expect(readRetryAfter('Tuesday, 01-Dec-76 00:00:00 GMT', now)).toEqual({ kind: 'too-long' });
    // Late in a century, a small two-digit year is in the next one: 05 from 2090 is 2105, not 2005.
    const late = Date.parse('2090-06-01T00:00:00Z');
    expect(readRetryAfter('Monday, 01-Jun-05 00:00:00 GMT', late)).toEqual({ kind: 'too-long' });
    expect(readRetryAfter('Wednesday, 01-Jun-89 00:00:00 GMT', late)).toEqual({ kind: 'wait', ms: 0 });
  });

  it('answers 0 for a date in the past: retry now', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
  });

  it('accepts a leap second', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:60 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:60 GMT', NOW)).toBe(60_000);
  });

  it('gives undefined for a missing or empty header', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter([], NOW)).toBeUndefined();
    expect(readRetryAfter('   ', NOW)).toEqual({ kind: 'absent' });
  });

  it('gives undefined for negative, fractional, signed and garbage values', () => {
    for (const garbage of [
      '-5',
      '1.5',
      '+3',
      '1e3',
      '0x10',
      'soon',
      'Infinity',
      'NaN',
      '120 seconds',
      '2015-10-21T07:28:02Z',
      'Wed, 21 Oct 2015 07:28:02 UTC',
      'wed, 21 oct 2015 07:28:02 gmt',
      'Wed, 31 Feb 2015 07:28:02 GMT',
      'Wed, 21 Foo 2015 07:28:02 GMT',
      'Wed, 21 Oct 2015 24:00:00 GMT',
      'Wed, 21 Oct 2015 07:61:00 GMT',
      'Wed, 21 Oct 2015 07:28:61 GMT',
      'Wed, 00 Oct 2015 07:28:02 GMT',
      'Wed, 1 Oct 2015 07:28:02 GMT',
    ]) {
      expect(parseRetryAfter(garbage, NOW), garbage).toBeUndefined();
      expect(readRetryAfter(garbage, NOW).kind, garbage).toBe('invalid');
    }
  });

  it('gives undefined for a wait above one day', () => {
    expect(RETRY_AFTER_MAX_MS).toBe(86_400_000);
    expect(parseRetryAfter('86400', NOW)).toBe(86_400_000);
    expect(parseRetryAfter('86401', NOW)).toBeUndefined();
    expect(readRetryAfter('86401', NOW)).toEqual({ kind: 'too-long' });
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBeUndefined();
    expect(parseRetryAfter('Thu, 22 Oct 2015 07:28:01 GMT', NOW)).toBeUndefined();
  });

  it('accepts repeated values only when they agree', () => {
    expect(parseRetryAfter(['5', '5'], NOW)).toBe(5000);
    expect(parseRetryAfter(['5', 'Wed, 21 Oct 2015 07:28:05 GMT'], NOW)).toBe(5000);
    expect(parseRetryAfter('5, 5', NOW)).toBe(5000);
    expect(parseRetryAfter(['5', '6'], NOW)).toBeUndefined();
    expect(parseRetryAfter('5, 6', NOW)).toBeUndefined();
    expect(parseRetryAfter(['5', 'soon'], NOW)).toBeUndefined();
    expect(parseRetryAfter(['5', ''], NOW)).toBeUndefined();
  });

  it('gives undefined for a date when now is not a number', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:02 GMT', Number.NaN)).toBeUndefined();
    expect(parseRetryAfter('3', Number.NaN)).toBe(3000);
  });

  it('never throws and returns undefined or a whole wait within the cap (property)', () => {
    const dateLike = fc
      .tuple(
        fc.constantFrom('Mon', 'Sun', 'Sunday', 'Xyz'),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom('Jan', 'Feb', 'Oct', 'oct', 'Foo'),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 0, max: 70 }),
      )
      .map(
        ([day, d, mon, y, s]) =>
          `${day}, ${String(d).padStart(2, '0')} ${mon} ${y} 07:28:${String(s).padStart(2, '0')} GMT`,
      );
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.stringMatching(/^[0-9 ,+-]{0,12}$/),
      dateLike,
      fc.array(fc.oneof(fc.string(), fc.nat().map(String)), { maxLength: 4 }),
      fc.constantFrom(undefined, null),
      fc.anything() as fc.Arbitrary<never>,
    );
    const now = fc.oneof(fc.integer({ min: -1e15, max: 1e15 }), fc.double());
    fc.assert(
      fc.property(value, now, (v, nowMs) => {
        const ms = parseRetryAfter(v, nowMs);
        if (ms !== undefined) {
          expect(Number.isInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(RETRY_AFTER_MAX_MS);
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it('round-trips every delay the cap allows (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_400 }),
        fc.integer({ min: 0, max: 4e12 }),
        (seconds, nowMs) => {
          expect(parseRetryAfter(String(seconds), nowMs)).toBe(seconds * 1000);
          const at = new Date(Math.ceil(nowMs / 1000) * 1000 + seconds * 1000);
          const wait = parseRetryAfter(at.toUTCString(), nowMs);
          const expected = at.getTime() - nowMs;
          expect(wait).toBe(expected > RETRY_AFTER_MAX_MS ? undefined : expected);
        },
      ),
      { numRuns: 10_000 },
    );
  });
});

describe('RFC 850 two-digit years (property)', () => {
  const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const rfc850 = (ms: number): string => {
    const d = new Date(ms);
    const two = (n: number) => String(n).padStart(2, '0');
    return `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${two(d.getUTCFullYear() % 100)} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} GMT`;
  };
  const YEAR_MS = 365.25 * 86_400_000;

  it('reads any instant within 50 years either side of now in its own century', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1980, 0, 1), max: Date.UTC(2300, 0, 1) }),
        fc.integer({ min: Math.ceil(-49.9 * YEAR_MS), max: Math.floor(49.9 * YEAR_MS) }),
        (now, offset) => {
          const reading = readRetryAfter(rfc850(now + offset), now);
          const secondsAway = Math.floor((now + offset) / 1000) * 1000 - now;
          if (secondsAway <= 0) expect(reading).toEqual({ kind: 'wait', ms: 0 });
          else if (secondsAway <= RETRY_AFTER_MAX_MS)
            expect(reading).toEqual({ kind: 'wait', ms: Math.ceil(secondsAway) });
          else expect(reading).toEqual({ kind: 'too-long' });
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
