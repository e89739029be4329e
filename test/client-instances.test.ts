import { startDouble } from '@prazo/lab/double';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import {
  elapsedSince,
  refusedOrigin,
  reply,
  startServer,
  type TestServer,
  warmUp,
} from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  await server?.close();
  dep = undefined;
  server = undefined;
});

describe('an instance that refuses connections', () => {
  for (const method of ['GET', 'POST'] as const) {
    it(`is skipped: a ${method} succeeds on the other instance within one connect timeout`, async () => {
      server = await startServer((req, res) => {
        req.resume();
        req.on('end', () => reply(res, 200));
      });
      const refused = await refusedOrigin();
      dep = dependency({
        name: 'inventory',
        origins: [refused, server.origin],
        latency: { p99Ms: 300 },
        userDeadlineMs: 1_000,
      });
      const { connectMs } = dep.policy();
      for (let i = 0; i < 4; i++) {
        const t0 = performance.now();
        const res = await dep.request({
          method,
          path: '/stock',
          ...(method === 'POST' ? { body: '{"n":1}' } : {}),
        });
        const took = elapsedSince(t0);
        expect(res.status).toBe(200);
        await res.body.dump();
        expect(took).toBeLessThan(connectMs);
      }
      // Every call reached the live instance exactly once.
      expect(server.seen.total).toBe(4);
    });
  }
});

describe('an instance that never completes a connect (black hole)', () => {
  it('is skipped by a POST too, when the connect and read timeouts are equal: nothing was sent', async () => {
    server = await startServer((req, res) => {
      req.resume();
      req.on('end', () => reply(res, 200));
    });
    const hole = await startDouble({ behaviour: { connectTimeout: true } });
    try {
      dep = dependency({
        name: 'payments',
        origins: [hole.url, server.origin],
        latency: { p99Ms: 50 }, // connect and read timeouts: both 70 ms
        userDeadlineMs: 1_000,
      });
      for (let i = 0; i < 4; i++) {
        const res = await dep.request({ method: 'POST', path: '/charge', body: '{"cents":100}' });
        await res.body.dump();
        expect(res.status).toBe(200);
      }
      expect(server.seen.total).toBe(4);
      expect(hole.stats().received).toBe(0);
    } finally {
      await dep?.close();
      dep = undefined;
      await hole.close();
    }
  });
});

describe('the lookup option', () => {
  it('resolves the origins’ host names through the caller’s lookup (a local hosts table here)', async () => {
    const hosts: string[] = [];
    server = await startServer((req, res) => {
      hosts.push(String(req.headers.host));
      reply(res, 200);
    });
    const port = new URL(server.origin).port;
    const asked: string[] = [];
    dep = dependency({
      name: 'inventory',
      origins: [`http://inventory.prazo.test:${port}`],
      latency: { p99Ms: 300 },
      userDeadlineMs: 1_000,
      lookup: (hostname, options, callback) => {
        asked.push(hostname);
        // As dns.lookup answers: one address, or all of them when asked for all.
        if ((options as { all?: boolean }).all)
          (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
            { address: '127.0.0.1', family: 4 },
          ]);
        else callback(null, '127.0.0.1', 4);
      },
    });
    const res = await dep.request({ path: '/' });
    await res.body.dump();
    expect(res.status).toBe(200);
    expect(asked).toContain('inventory.prazo.test');
    expect(hosts).toEqual([`inventory.prazo.test:${port}`]);
  });

  it('is refused when it is not a function', () => {
    expect(() =>
      dependency({
        name: 'inventory',
        origins: ['http://127.0.0.1:1'],
        latency: { p99Ms: 300 },
        userDeadlineMs: 1_000,
        lookup: 'dns' as never,
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
