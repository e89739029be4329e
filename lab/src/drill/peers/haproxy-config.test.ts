import { describe, expect, it } from 'vitest';
import { haproxyConfig } from './haproxy-config.js';

describe('haproxyConfig', () => {
  const text = haproxyConfig({
    port: 41000,
    servers: ['http://127.0.0.1:41001', 'http://127.0.0.1:41002'],
    checkPath: '/stock',
    connectMs: 252,
    readMs: 252,
    attempts: 3,
  });

  it('binds to loopback only, on the given port', () => {
    expect(text).toContain('bind 127.0.0.1:41000');
    expect(text).not.toMatch(/bind \*|bind 0\.0\.0\.0/);
  });

  it('sets the per-attempt timeouts and layer-7 retries on another server', () => {
    expect(text).toContain('timeout connect 252ms');
    expect(text).toContain('timeout server 252ms');
    expect(text).toContain('retries 2');
    expect(text).toContain('retry-on all-retryable-errors');
    expect(text).toContain('option redispatch 1');
  });

  it('checks every instance and marks one down on errors seen in live traffic', () => {
    expect(text).toContain('option httpchk GET /stock');
    expect(text).toMatch(/default-server .*observe layer7 .*on-error mark-down/);
    expect(text).toContain('server supplier-0 127.0.0.1:41001 check');
    expect(text).toContain('server supplier-1 127.0.0.1:41002 check');
  });
});
