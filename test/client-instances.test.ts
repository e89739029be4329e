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
