import { describe, expect, it } from 'vitest';
import { hasIdempotencyKey, isHedgeSafe, isIdempotent } from './idempotency.js';

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
