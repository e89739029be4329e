import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import {
  DNS_ORIGINS_DEFAULTS,
  type DnsOriginsOptions,
  dnsOrigins,
  normalizeDnsOriginsOptions,
} from './dns-origins.js';

const base: DnsOriginsOptions = { hostname: 'inventory.internal', port: 8080 };

function optionOf(options: unknown): string | undefined {
  try {
    normalizeDnsOriginsOptions(options as DnsOriginsOptions);
  } catch (error) {
    return error instanceof InvalidOptionError ? error.option : 'another error';
  }
  return undefined;
}

describe('normalizeDnsOriginsOptions', () => {
  it('applies the documented defaults', () => {
    expect(normalizeDnsOriginsOptions(base)).toEqual({
      ...base,
      ...DNS_ORIGINS_DEFAULTS,
      servers: undefined,
    });
    expect(DNS_ORIGINS_DEFAULTS).toEqual({
      protocol: 'http',
      family: 'any',
      minRefreshMs: 1_000,
      maxRefreshMs: 30_000,
      queryTimeoutMs: 1_000,
    });
  });

  it('names the option it refuses', () => {
    expect(optionOf(null)).toBe('options');
    expect(optionOf({ ...base, hostname: '' })).toBe('hostname');
    expect(optionOf({ ...base, hostname: 'http://inventory' })).toBe('hostname');
    expect(optionOf({ ...base, port: 0 })).toBe('port');
    expect(optionOf({ ...base, port: 65_536 })).toBe('port');
    expect(optionOf({ ...base, port: '8080' })).toBe('port');
    expect(optionOf({ ...base, protocol: 'ftp' })).toBe('protocol');
    expect(optionOf({ ...base, family: 5 })).toBe('family');
    expect(optionOf({ ...base, servers: '127.0.0.1' })).toBe('servers');
    expect(optionOf({ ...base, minRefreshMs: 0 })).toBe('minRefreshMs');
    expect(optionOf({ ...base, maxRefreshMs: Number.POSITIVE_INFINITY })).toBe('maxRefreshMs');
    expect(optionOf({ ...base, minRefreshMs: 5_000, maxRefreshMs: 1_000 })).toBe('maxRefreshMs');
    expect(optionOf({ ...base, queryTimeoutMs: -1 })).toBe('queryTimeoutMs');
  });

  it('refuses a DNS server address node:dns cannot use, when the resolver is built', () => {
    expect(() => dnsOrigins({ ...base, servers: ['not an address'] })).toThrow(/servers/);
  });

  it('builds a resolver that can be cancelled', () => {
    const resolve = dnsOrigins({ ...base, servers: ['127.0.0.1:53'] });
    expect(typeof resolve).toBe('function');
    expect(() => resolve.cancel?.()).not.toThrow();
  });
});
