import { describe, expect, it } from 'vitest';
import { type DependencyOptions, normalizeDependencyOptions } from './options.js';

const base: DependencyOptions = {
  name: 'inventory',
  origins: ['https://10.0.0.7:8443'],
  latency: { p99Ms: 180 },
  userDeadlineMs: 1_500,
};

describe('normalizeDependencyOptions: tls and http2', () => {
  it('keeps Node’s TLS defaults and HTTP/1.1 unless told', () => {
    const o = normalizeDependencyOptions(base);
    expect(o.tls).toBeUndefined();
    expect(o.http2).toBe(false);
  });

  it('takes a private CA, a client certificate with its key, a server name', () => {
    const o = normalizeDependencyOptions({
      ...base,
      tls: { ca: ['A', Buffer.from('B')], cert: 'C', key: 'K', servername: 'inventory.internal' },
      http2: true,
    });
    expect(o.tls).toEqual({
      ca: ['A', Buffer.from('B')],
      cert: 'C',
      key: 'K',
      servername: 'inventory.internal',
    });
    expect(o.http2).toBe(true);
  });

  it.each([
    [{ tls: 'yes' }, 'tls'],
    [{ tls: { ca: 42 } }, 'tls.ca'],
    [{ tls: { ca: [] } }, 'tls.ca'],
    [{ tls: { cert: 'C' } }, 'tls.key'],
    [{ tls: { key: 'K' } }, 'tls.cert'],
    [{ tls: { servername: '' } }, 'tls.servername'],
    [{ tls: { rejectUnauthorized: 'no' } }, 'tls.rejectUnauthorized'],
    [{ tls: { passphrase: 'x' } }, 'tls.passphrase'],
    [{ http2: 'h2' }, 'http2'],
  ])('refuses %j, naming %s', (extra, option) => {
    expect(() => normalizeDependencyOptions({ ...base, ...(extra as object) })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option }),
    );
  });
});
