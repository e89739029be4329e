import { DEADLINE_HEADER as fromLab } from '@prazo/lab';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEADLINE_HEADER, parseDeadlineHeader, parseGrpcTimeout } from './deadline-header.js';

const NOW = 1_700_000_000_000;
const options = { defaultMs: 1000, maxMs: 5000 };

describe('parseDeadlineHeader', () => {
  it('honours a limit within the local maximum as sent', () => {
    expect(parseDeadlineHeader(String(NOW + 1900), NOW, options)).toEqual({
      limitMs: NOW + 1900,
      arrivalLimitMs: NOW + 1900,
      source: 'header',
      capped: false,
    });
  });

  it('holds a far-future limit to now + maxMs', () => {
    expect(parseDeadlineHeader(String(NOW + 3_600_000), NOW, options)).toEqual({
      limitMs: NOW + 5000,
      arrivalLimitMs: NOW + 5000,
      source: 'header',
      capped: true,
    });
    expect(parseDeadlineHeader('9999999999999999', NOW, options).limitMs).toBe(NOW + 5000);
  });

  it('keeps a limit already in the past, so that the server can answer 504 at once', () => {
    expect(parseDeadlineHeader(String(NOW - 1), NOW, options)).toMatchObject({
      limitMs: NOW - 1,
      source: 'header',
    });
    expect(parseDeadlineHeader('0', NOW, options).limitMs).toBe(0);
  });

  it('gives the local default to a missing header, without calling it invalid', () => {
    expect(parseDeadlineHeader(undefined, NOW, options)).toEqual({
      limitMs: NOW + 1000,
      arrivalLimitMs: NOW + 1000,
      source: 'default',
      capped: false,
    });
    expect(parseDeadlineHeader('', NOW, options)).not.toHaveProperty('invalid');
    expect(parseDeadlineHeader([], NOW, options).source).toBe('default');
  });

  it.each([
    ['non-numeric', 'soon'],
    ['negative', '-1700000001900'],
    ['fractional', '1700000001900.5'],
    ['exponent', '1.7e12'],
    ['non-finite', 'Infinity'],
    ['NaN', 'NaN'],
    ['hex', '0x18bcfe56800'],
    ['signed', '+1700000001900'],
    ['too many digits', '12345678901234567890'],
    ['digits with junk', '1700000001900ms'],
  ])('treats a %s value as garbage and gives the local default', (_kind, value) => {
    const parsed = parseDeadlineHeader(value, NOW, options);
    expect(parsed).toMatchObject({ limitMs: NOW + 1000, source: 'default', capped: false });
    expect(parsed.invalid).toContain('x-deadline-epoch-ms');
  });

  it('takes the earliest of several valid values, as an array or a comma-joined list', () => {
    expect(parseDeadlineHeader([String(NOW + 900), String(NOW + 300)], NOW, options).limitMs).toBe(NOW + 300);
    expect(parseDeadlineHeader(`${NOW + 900}, ${NOW + 300}`, NOW, options).limitMs).toBe(NOW + 300);
  });

  it('ignores garbage next to a valid value', () => {
    const parsed = parseDeadlineHeader(['soon', String(NOW + 700)], NOW, options);
    expect(parsed).toEqual({
      limitMs: NOW + 700,
      arrivalLimitMs: NOW + 700,
      source: 'header',
      capped: false,
    });
  });

  it('holds a default larger than the maximum to the maximum', () => {
    expect(parseDeadlineHeader(undefined, NOW, { defaultMs: 9000, maxMs: 5000 }).limitMs).toBe(NOW + 5000);
  });

  it('never adds the skew allowance to the limit it passes on: skew only moves the arrival check', () => {
    const skewed = { ...options, skewMs: 50 };
    expect(parseDeadlineHeader(String(NOW - 20), NOW, skewed)).toMatchObject({
      limitMs: NOW - 20,
      arrivalLimitMs: NOW + 30,
    });
    expect(parseDeadlineHeader(String(NOW + 4990), NOW, skewed)).toMatchObject({
      limitMs: NOW + 4990,
      arrivalLimitMs: NOW + 5040,
      capped: false,
    });
    expect(parseDeadlineHeader(String(NOW + 6000), NOW, skewed)).toMatchObject({
      limitMs: NOW + 5000,
      arrivalLimitMs: NOW + 5000,
      capped: true,
    });
    expect(parseDeadlineHeader(undefined, NOW, { ...skewed, grpcTimeout: '250m' }).arrivalLimitMs).toBe(
      NOW + 250,
    );
  });

  it('reads grpc-timeout as a relative limit and takes the earlier of both inputs', () => {
    expect(parseDeadlineHeader(undefined, NOW, { ...options, grpcTimeout: '250m' })).toEqual({
      limitMs: NOW + 250,
      arrivalLimitMs: NOW + 250,
      source: 'grpc-timeout',
      capped: false,
    });
    expect(parseDeadlineHeader(String(NOW + 100), NOW, { ...options, grpcTimeout: '250m' }).source).toBe(
      'header',
    );
    expect(parseDeadlineHeader(String(NOW + 900), NOW, { ...options, grpcTimeout: '2S' }).limitMs).toBe(
      NOW + 900,
    );
    expect(parseDeadlineHeader('soon', NOW, { ...options, grpcTimeout: '1H' })).toMatchObject({
      limitMs: NOW + 5000,
      source: 'grpc-timeout',
      capped: true,
    });
  });

  it('reports both rejected inputs when neither is usable', () => {
    const parsed = parseDeadlineHeader('soon', NOW, { ...options, grpcTimeout: '250ms' });
    expect(parsed.source).toBe('default');
    expect(parsed.invalid).toContain('x-deadline-epoch-ms');
    expect(parsed.invalid).toContain('grpc-timeout');
  });

  it('rejects unusable options with an error that names them', () => {
    expect(() => parseDeadlineHeader(undefined, NOW, { defaultMs: 1000, maxMs: 0 })).toThrow(/`maxMs`/);
    expect(() => parseDeadlineHeader(undefined, NOW, { defaultMs: Number.NaN, maxMs: 10 })).toThrow(
      /`defaultMs`/,
    );
    expect(() => parseDeadlineHeader(undefined, NOW, { ...options, skewMs: -1 })).toThrow(/`skewMs`/);
  });

  const headerValue = fc.oneof(
    fc.constant(undefined),
    fc.string(),
    fc.array(fc.string(), { maxLength: 4 }),
    fc.integer({ min: -1e17, max: 1e17 }).map(String),
    fc.array(fc.oneof(fc.nat().map(String), fc.string()), { maxLength: 4 }).map((list) => list.join(',')),
    fc.double().map(String),
  );
  const grpcValue = fc.oneof(
    fc.constant(undefined),
    fc.string(),
    fc
      .tuple(fc.nat({ max: 999_999_999 }), fc.constantFrom('H', 'M', 'S', 'm', 'u', 'n', 'x', ''))
      .map(([n, unit]) => `${n}${unit}`),
  );

  it('never throws and never returns a limit beyond now + maxMs, for any header (10 000 cases)', () => {
    fc.assert(
      fc.property(
        headerValue,
        grpcValue,
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 0, max: 1000 }),
        (value, grpcTimeout, now, defaultMs, maxMs, skewMs) => {
          const parsed = parseDeadlineHeader(value, now, { defaultMs, maxMs, skewMs, grpcTimeout });
          expect(parsed.limitMs).toBeLessThanOrEqual(now + maxMs);
          expect(Number.isFinite(parsed.limitMs)).toBe(true);
          if (parsed.source === 'default') expect(parsed.limitMs).toBe(now + Math.min(defaultMs, maxMs));
        },
      ),
      { numRuns: 10_000 },
    );
  });
});

describe('parseGrpcTimeout', () => {
  it.each([
    ['1H', 3_600_000],
    ['2M', 120_000],
    ['2S', 2000],
    ['250m', 250],
    ['1500u', 1],
    ['999999n', 0],
    ['99999999m', 99_999_999],
  ])('reads %s as %d ms', (value, ms) => {
    expect(parseGrpcTimeout(value)).toBe(ms);
  });

  it.each(['', '250', 'm', '250ms', '123456789m', '-5S', '1.5S', ' S', '25 m'])('rejects %j', (value) => {
    expect(parseGrpcTimeout(value)).toBeUndefined();
  });

  it.each(['0m', '0S', '00000000H', '0n'])(
    'rejects the zero timeout %j (gRPC requires a positive value)',
    (value) => {
      expect(parseGrpcTimeout(value)).toBeUndefined();
      expect(parseDeadlineHeader(undefined, NOW, { ...options, grpcTimeout: value })).toMatchObject({
        source: 'default',
        invalid: expect.stringContaining('grpc-timeout'),
      });
    },
  );

  it('takes the shortest of several valid values', () => {
    expect(parseGrpcTimeout(['2S', '250m', 'junk'])).toBe(250);
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
  });

  it('never throws and returns a finite duration of at most 8 digits of hours (10 000 cases)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 })), (value) => {
        const ms = parseGrpcTimeout(value);
        if (ms !== undefined) {
          expect(Number.isFinite(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(99_999_999 * 3_600_000);
        }
      }),
      { numRuns: 10_000 },
    );
  });
});

describe('deadline header name', () => {
  it('is x-deadline-epoch-ms, the one name the library and the lab use', () => {
    expect(DEADLINE_HEADER).toBe('x-deadline-epoch-ms');
    expect(fromLab).toBe(DEADLINE_HEADER);
  });
});
