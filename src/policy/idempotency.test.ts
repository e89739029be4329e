import { describe, expect, it } from 'vitest';
import { isIdempotent } from './idempotency.js';

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
