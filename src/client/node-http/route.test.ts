import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originTable, routeOf } from './route.js';

const table = originTable(['http://10.0.0.7:8080', 'https://api.example.com', 'http://[::1]:9000']);
const origin = (target: ReturnType<typeof routeOf>) =>
  typeof target === 'object' ? target.origin.origin : target;

describe('routeOf', () => {
  it('finds a governed origin however Node is handed it', () => {
    const forms: [unknown, unknown, unknown][] = [
      ['http://10.0.0.7:8080/stock/42?x=1', undefined, undefined],
      [new URL('http://10.0.0.7:8080/stock/42'), undefined, undefined],
      [{ hostname: '10.0.0.7', port: 8080, path: '/stock/42' }, undefined, undefined],
      [{ host: '10.0.0.7', port: '8080' }, () => {}, undefined],
      ['http://other/x', { hostname: '10.0.0.7', port: 8080 }, undefined],
      [{ hostname: '10.0.0.7', defaultPort: 8080 }, undefined, undefined],
    ];
    for (const [a, b, c] of forms)
      expect(origin(routeOf(table, 'http:', a, b, c))).toBe('http://10.0.0.7:8080');
    expect(origin(routeOf(table, 'https:', 'HTTPS://API.example.com/v1', undefined, undefined))).toBe(
      'https://api.example.com',
    );
    expect(origin(routeOf(table, 'https:', { hostname: 'api.example.com' }, undefined, undefined))).toBe(
      'https://api.example.com',
    );
    expect(origin(routeOf(table, 'http:', { hostname: '::1', port: 9000 }, undefined, undefined))).toBe(
      'http://[::1]:9000',
    );
  });

  it('leaves to Node a port that is neither a string nor a number (found by the property test)', () => {
    for (const port of [{ toString: 1 }, Object.create(null), [8080], Symbol('p')])
      expect(routeOf(table, 'http:', { hostname: '10.0.0.7', port }, undefined, undefined)).toBeUndefined();
  });

  it('reads the path, method, callback, auth and timeout of a governed call', () => {
    const callback = () => {};
    const target = routeOf(
      table,
      'http:',
      'http://u:p%40ss@10.0.0.7:8080/a?b=1',
      { method: 'post', timeout: 50 },
      callback,
    );
    expect(target).toMatchObject({ method: 'POST', path: '/a?b=1', auth: 'u:p@ss', timeoutMs: 50, callback });
  });

  it('leaves other ports, protocols and hosts to Node', () => {
    expect(routeOf(table, 'http:', 'http://10.0.0.7:8081/', undefined, undefined)).toBeUndefined();
    expect(routeOf(table, 'http:', { hostname: '10.0.0.7' }, undefined, undefined)).toBeUndefined();
    // http.request() of an https: URL: Node throws ERR_INVALID_PROTOCOL, so it is Node's to throw.
    expect(routeOf(table, 'http:', 'https://api.example.com/', undefined, undefined)).toBeUndefined();
    expect(
      routeOf(table, 'http:', { hostname: 'example.com', port: 8080 }, undefined, undefined),
    ).toBeUndefined();
  });

  it('passes a governed call through when it asks for what prazo does not carry', () => {
    const at = { hostname: '10.0.0.7', port: 8080 };
    expect(routeOf(table, 'http:', { ...at, socketPath: '/tmp/s' }, undefined, undefined)).toBe(
      'socket-path',
    );
    expect(routeOf(table, 'http:', { ...at, createConnection: () => {} }, undefined, undefined)).toBe(
      'create-connection',
    );
    expect(
      routeOf(table, 'http:', { ...at, headers: { Expect: '100-continue' } }, undefined, undefined),
    ).toBe('header');
    expect(
      routeOf(table, 'http:', { ...at, headers: { 'Transfer-Encoding': 'chunked' } }, undefined, undefined),
    ).toBe('header');
    expect(
      routeOf(table, 'http:', { ...at, headers: { Connection: 'keep-alive' } }, undefined, undefined),
    ).toMatchObject({ method: 'GET' });
    expect(routeOf(table, 'https:', { hostname: 'api.example.com', ca: 'x' }, undefined, undefined)).toBe(
      'tls-options',
    );
    expect(
      routeOf(
        table,
        'https:',
        { hostname: 'api.example.com', agent: { options: { rejectUnauthorized: false } } },
        undefined,
        undefined,
      ),
    ).toBe('tls-options');
    expect(routeOf(table, 'http:', { ...at, method: 'connect' }, undefined, undefined)).toBe('method');
  });

  it('never throws, and governs nothing whose host is not a governed one', () => {
    const hosts = fc.constantFrom('10.0.0.7', 'api.example.com', '::1', 'elsewhere', '10.0.0.70');
    const input = fc.oneof(
      fc.string(),
      fc.webUrl().map((u) => new URL(u)),
      fc.record(
        {
          hostname: fc.oneof(hosts, fc.anything()),
          host: fc.anything(),
          port: fc.oneof(fc.integer(), fc.string(), fc.anything()),
          protocol: fc.oneof(fc.constantFrom('http:', 'https:'), fc.anything()),
          headers: fc.anything(),
          method: fc.anything(),
          path: fc.anything(),
          agent: fc.anything(),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('http:', 'https:'),
        input,
        fc.anything(),
        fc.anything(),
        (protocol, a, b, c) => {
          const route = routeOf(table, protocol as 'http:' | 'https:', a, b, c);
          if (typeof route === 'object') expect(table.hosts.has(route.origin.hostname)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
