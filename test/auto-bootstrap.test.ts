/**
 * The service, for real: Express with prazo's deadline middleware, a dependency with
 * `latency: 'auto'` (start p99 ≈ 1 s from a 3 s user deadline and 2 attempts), callers that give it
 * 400 ms, and a 5 ms dependency double. Before the bootstrap, 0 of 60 calls reached the double.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Double, startDouble } from '@prazo/lab/double';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/index.js';
import { deadlineErrorHandler, deadlineMiddleware } from '../src/server/express.js';

let double: Double;
let supplier: Dependency;
let server: Server;
let url = '';

beforeAll(async () => {
  double = await startDouble({ behaviour: { answerAtMs: 5 }, seed: 14 });
  supplier = dependency({
    name: 'supplier',
    origins: [double.url],
    latency: 'auto',
    userDeadlineMs: 3_000,
    attempts: 2,
    liveMinSamples: 20,
    liveRefreshMs: 50,
  });
  const app = express();
  // The caller's tight deadline must count: it is the point of the test.
  app.use(deadlineMiddleware({ defaultMs: 3_000, maxMs: 3_000, trust: 'all' }));
  app.get('/', async (_req, res) => {
    const answer = await supplier.request({ path: '/' });
    await answer.body.dump();
    res.json({ status: answer.status });
  });
  app.use(deadlineErrorHandler());
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await supplier.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await double.close();
});

describe("latency: 'auto' under a tight caller deadline (Express, real servers)", () => {
  it('lets calls reach a 5 ms dependency while its p99 is a 1 s guess, and learns the real p99', async () => {
    expect(supplier.policy()).toMatchObject({ sources: { p99: 'start' } });
    expect(supplier.policy().p99Ms).toBeGreaterThan(400);
    let ok = 0;
    for (let i = 0; i < 60; i++) {
      const res = await request(url, { headers: { 'x-deadline-epoch-ms': String(Date.now() + 400) } });
      if (res.statusCode === 200) ok++;
      await res.body.dump();
    }
    expect(ok).toBe(60);
    expect(double.stats().received).toBe(60);
    expect(supplier.policy().sources.p99).toBe('live');
    expect(supplier.policy().p99Ms).toBeLessThan(400);
  });
});
