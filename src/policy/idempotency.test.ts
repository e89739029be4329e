import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasIdempotencyKey, hasIdempotencyKeyInPairs, isHedgeSafe, isIdempotent } from './idempotency.js';

describe('isIdempotent', () => {
  it('accepts the idempotent methods of RFC 9110, in any case', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'get', 'Put']) {
      expect(isIdempotent(method), method).toBe(true);
    }
  });

  it('refuses POST, PATCH, CONNECT and unknown methods', () => {
    for (const method of ['POST', 'PATCH', 'CONNECT', 'PURGE', '']) {
      expect(isIdempotent(method), method).toBe(false);
      expect(isIdempotent(method, {}), method).toBe(false);
    }
  });

  it('accepts any request carrying an Idempotency-Key, whatever the header name’s case', () => {
    expect(isIdempotent('POST', { 'idempotency-key': 'a' })).toBe(true);
    expect(isIdempotent('PATCH', { 'Idempotency-Key': 'a' })).toBe(true);
    expect(isIdempotent('POST', { 'IDEMPOTENCY-KEY': ['a'] })).toBe(true);
  });

  it('ignores an empty or missing Idempotency-Key', () => {
    expect(isIdempotent('POST', { 'idempotency-key': '' })).toBe(false);
    expect(isIdempotent('POST', { 'idempotency-key': '  ' })).toBe(false);
    expect(isIdempotent('POST', { 'idempotency-key': undefined })).toBe(false);
    expect(isIdempotent('POST', { 'idempotency-key': [] })).toBe(false);
    expect(isIdempotent('POST', { 'x-idempotency-key': 'a' })).toBe(false);
    expect(isIdempotent('POST', undefined)).toBe(false);
  });
});

describe('an Idempotency-Key sent as a number', () => {
  it('counts a numeric Idempotency-Key value as a key', () => {
    const headers = { 'Idempotency-Key': 42 } as unknown as Record<string, string>;
    expect(isIdempotent('POST', headers)).toBe(true);
    expect(hasIdempotencyKey(headers)).toBe(true);
    expect(hasIdempotencyKey({ 'idempotency-key': [7] } as unknown as Record<string, string[]>)).toBe(true);
    expect(hasIdempotencyKey({ 'idempotency-key': Number.NaN } as unknown as Record<string, string>)).toBe(
      false,
    );
  });
});

describe('isHedgeSafe', () => {
  it('hedges only safe methods (GET, HEAD, OPTIONS) or requests carrying an Idempotency-Key', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'get']) expect(isHedgeSafe(method), method).toBe(true);
    for (const method of ['PUT', 'DELETE', 'POST', 'PATCH', 'TRACE'])
      expect(isHedgeSafe(method), method).toBe(false);
    expect(isHedgeSafe('PUT', { 'Idempotency-Key': 'k1' })).toBe(true);
    expect(isHedgeSafe('DELETE', { 'idempotency-key': 9 } as unknown as Record<string, string>)).toBe(true);
  });
});

describe('hasIdempotencyKeyInPairs', () => {
  it('reads flat pairs as hasIdempotencyKey reads the record they came from', () => {
    const name = fc.constantFrom(
      'Idempotency-Key',
      'idempotency-key',
      'IDEMPOTENCY-KEY',
      'x-other',
      'idempotency-kez',
    );
    const value = fc.oneof(fc.constantFrom('', '  ', 'order-42', '\t'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.dictionary(name, fc.oneof(value, fc.array(value, { maxLength: 3 }))), (record) => {
        const pairs: string[] = [];
        for (const [key, v] of Object.entries(record))
          for (const item of Array.isArray(v) ? v : [v]) pairs.push(key, item);
        // The record's lookup takes one spelling of the name; the pairs hold every spelling.
        const spellings = Object.keys(record).filter((key) => key.toLowerCase() === 'idempotency-key');
        const expected = spellings.some((key) => hasIdempotencyKey({ [key]: record[key] }));
        expect(hasIdempotencyKeyInPairs(pairs)).toBe(expected);
      }),
    );
  });

  it('finds nothing in no headers, an odd trailing name, or a blank key', () => {
    expect(hasIdempotencyKeyInPairs(null)).toBe(false);
    expect(hasIdempotencyKeyInPairs(['idempotency-key'])).toBe(false);
    expect(hasIdempotencyKeyInPairs(['Idempotency-Key', ' '])).toBe(false);
    expect(hasIdempotencyKeyInPairs(['accept', '*/*', 'Idempotency-Key', 'k1'])).toBe(true);
  });
});
