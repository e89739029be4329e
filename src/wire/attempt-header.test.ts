import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_HEADER,
  ATTEMPT_KINDS,
  attemptHeaderValue,
  formatAttemptHeader,
  parseAttemptHeader,
} from './attempt-header.js';

describe('attempt header', () => {
  it('is named x-prazo-attempt', () => {
    expect(ATTEMPT_HEADER).toBe('x-prazo-attempt');
  });

  it.each([
    ['1;kind=original', { attempt: 1, kind: 'original' }],
    ['2;kind=retry', { attempt: 2, kind: 'retry' }],
    ['3;kind=hedge', { attempt: 3, kind: 'hedge' }],
    [' 2 ; KIND = Retry ', { attempt: 2, kind: 'retry' }],
  ])('reads %j', (value, expected) => {
    expect(parseAttemptHeader(value)).toEqual(expected);
  });

  it.each([
    undefined,
    '',
    'two;kind=retry',
    '0;kind=original',
    '01;kind=retry',
    '2;kind=other',
    '2',
    '2;kind=retry;extra',
    '99999999;kind=retry',
    ['1;kind=original', '2;kind=retry'],
  ])('treats %j as absent', (value) => {
    expect(parseAttemptHeader(value)).toBeUndefined();
  });

  it('reads back whatever it writes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(...ATTEMPT_KINDS),
        (attempt, kind) => {
          expect(parseAttemptHeader(formatAttemptHeader({ attempt, kind }))).toEqual({ attempt, kind });
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue(), fc.stringMatching(/^\d+;kind=\w+$/)), (value) => {
        const parsed = parseAttemptHeader(value);
        if (parsed !== undefined) {
          expect(parsed.attempt).toBeGreaterThanOrEqual(1);
          expect(ATTEMPT_KINDS).toContain(parsed.kind);
        }
      }),
      { numRuns: 10_000 },
    );
  });

  it('refuses to write an attempt number below 1', () => {
    expect(() => formatAttemptHeader({ attempt: 0, kind: 'original' })).toThrow(RangeError);
  });

  it('gives every attempt the value formatAttemptHeader writes, from its table or past it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(...ATTEMPT_KINDS),
        (attempt, kind) => {
          expect(attemptHeaderValue(attempt, kind)).toBe(formatAttemptHeader({ attempt, kind }));
          expect(parseAttemptHeader(attemptHeaderValue(attempt, kind))).toEqual({ attempt, kind });
        },
      ),
    );
    for (const kind of ATTEMPT_KINDS)
      for (let attempt = 1; attempt <= 20; attempt++)
        expect(attemptHeaderValue(attempt, kind)).toBe(`${attempt};kind=${kind}`);
  });
});
