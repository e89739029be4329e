import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRandom } from '@prazo/lab/random';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import type { DependencyOptions } from '../src/client/options.js';
import { refusedOrigin, reply, startServer, type TestServer, warmUp } from './support/servers.js';

// A dependency is a fleet: one sick, slow or refusing instance must not make it sick. Instances
// listen on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all loopback), each on port 0.

beforeAll(warmUp);

const servers: TestServer[] = [];
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  dep = undefined;
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server that reads the body, then answers what `status()` says after `delayMs`. */
async function instance(host: string, status: () => number, delayMs = 0): Promise<TestServer> {
  const server = await startServer((req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (delayMs === 0) reply(res, status());
      else setTimeout(() => reply(res, status()), delayMs);
    });
  }, host);
  servers.push(server);
  return server;
}

function fleet(origins: string[], options: Partial<DependencyOptions> = {}): Dependency {
  dep = dependency({
    name: 'inventory',
    origins,
    latency: { p99Ms: 400 },
    userDeadlineMs: 2_000,
    random: createRandom(7),
    ...options,
  });
  return dep;
}

async function call(d: Dependency, method = 'GET'): Promise<number> {
  const res = await d.request({ method, path: '/stock', ...(method === 'POST' ? { body: '{"n":1}' } : {}) });
  await res.body.dump();
  return res.status;
}

describe('a fleet with a sick instance', () => {
  it('two instances, one always 503: ≥ 99 % of 300 sequential calls succeed and the sick one sees ≤ 15 %', async () => {
    const sick = await instance('127.0.0.1', () => 503);
    const healthy = await instance('127.0.0.2', () => 200);
    const d = fleet([sick.origin, healthy.origin]);
    let ok = 0;
    for (let i = 0; i < 300; i++) if ((await call(d)) === 200) ok++;
    expect(ok / 300).toBeGreaterThanOrEqual(0.99);
    expect(sick.seen.total / 300).toBeLessThanOrEqual(0.15);
    expect(d.instances().find((s) => s.origin === sick.origin)?.state).toBe('ejected');
  });

  it('a 503’s retry goes to an instance that is up, never to one known to refuse connections', async () => {
    const sick = await instance('127.0.0.1', () => 503);
    const healthy = await instance('127.0.0.2', () => 200);
    const healthy2 = await instance('127.0.0.4', () => 200);
    const refused = await refusedOrigin('127.0.0.3');
    // Known to refuse for the whole test (the default is 1 s, then it is tried again). Two healthy
    // instances of four: with the sick one ejected and the refusing one down, half the fleet is up,
    // no panic (with three, the balancer would spread load over the sick one again, as Envoy does).
    const d = fleet([sick.origin, healthy.origin, refused, healthy2.origin], {
      balancer: { connectDownMs: 60_000 },
    });
    // Every attempt in the order it was sent (the calls are sequential), and whether, when it was sent,
    // the refusing instance had already refused an attempt (before that, nothing tells it apart).
    const sent: { requestId: number; attempt: number; instance: string; refusalKnown: boolean }[] = [];
    const statusOf = new Map<string, number | undefined>();
    let refusalKnown = false;
    d.on('attempt-start', (e) =>
      sent.push({ requestId: e.requestId, attempt: e.attempt, instance: e.instance, refusalKnown }),
    );
    d.on('attempt-end', (e) => {
      statusOf.set(`${e.requestId}/${e.attempt}`, e.status);
      if (e.instance === refused) refusalKnown = true;
    });
    let ok = 0;
    for (let i = 0; i < 100; i++) if ((await call(d)) === 200) ok++;
    expect(ok).toBe(100);
    let retriesAfter503 = 0;
    for (let k = 1; k < sent.length; k++) {
      const previous = sent[k - 1]!;
      const retry = sent[k]!;
      if (retry.requestId !== previous.requestId) continue;
      if (statusOf.get(`${previous.requestId}/${previous.attempt}`) !== 503) continue;
      retriesAfter503++;
      const up = retry.refusalKnown
        ? [healthy.origin, healthy2.origin]
        : [healthy.origin, healthy2.origin, refused];
      expect(up).toContain(retry.instance);
    }
    // The sick instance is tried until it is ejected: its 503s were retried.
    expect(retriesAfter503).toBeGreaterThanOrEqual(3);
    expect(d.instances().find((s) => s.origin === refused)?.state).toBe('down');
  });
  it('a requeue after a 503 and a refused connect goes to an instance that is up, never back to the sick one', async () => {
    const sick = await instance('127.0.0.1', () => 503);
    const healthy = await instance('127.0.0.2', () => 200);
    const healthy2 = await instance('127.0.0.4', () => 200);
    const refused = await refusedOrigin('127.0.0.3');
    // Each seed is a fresh fleet where nothing is known yet: the first calls find the sick and the
    // refusing instances in any order; a call never returns to an instance that already failed it.
    let ok = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const d = dependency({
        name: 'inventory',
        origins: [sick.origin, healthy.origin, refused, healthy2.origin],
        latency: { p99Ms: 400 },
        userDeadlineMs: 2_000,
        random: createRandom(seed),
      });
      for (let i = 0; i < 4; i++) if ((await call(d)) === 200) ok++;
      await d.close();
    }
    expect(ok).toBe(24 * 4);
  });
});

describe('a fleet with a slow instance', () => {
  it('two instances, one 150 ms slower: the slow one gets ≤ 25 % of 60 sequential calls', async () => {
    const slow = await instance('127.0.0.1', () => 200, 150);
    const fast = await instance('127.0.0.2', () => 200);
    const d = fleet([slow.origin, fast.origin]);
    for (let i = 0; i < 60; i++) expect(await call(d)).toBe(200);
    // The balancer's choice is each call's first copy (60 in all, one per call). A hedge may still go
    // to the slow one when the fast one is late on a machine busy enough to stall it: a run of the
    // whole suite on 2026-12-06 counted 24 of 60 requests there, copies of every kind together.
    const { original, hedge, retry } = slow.seen;
    expect(original + fast.seen.original).toBe(60);
    expect(original / 60, JSON.stringify({ original, hedge, retry })).toBeLessThanOrEqual(0.25);
  });

  it('two instances, one 150 ms slower: the slow one gets ≤ 25 % of the calls at 32 concurrent', async () => {
    const slow = await instance('127.0.0.1', () => 200, 150);
    const fast = await instance('127.0.0.2', () => 200);
    // 32 calls at once in a process that shares 2 cores with other test files: a read timeout with
    // room for a starved event loop, so the test judges the balancer's share and not the machine.
    const d = fleet([slow.origin, fast.origin], { latency: { p99Ms: 1_500 }, userDeadlineMs: 8_000 });
    const calls = 640;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < calls) {
        next++;
        expect(await call(d)).toBe(200);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    expect(slow.seen.total + fast.seen.total).toBe(calls);
    expect(slow.seen.total / calls).toBeLessThanOrEqual(0.25);
  }, 30_000);
});

describe('a fleet with an instance refusing connections', () => {
  it('three instances, one refusing, attempts: 1: every call succeeds and no POST is sent twice', async () => {
    const bodies = new Map<string, number>();
    const counting = async (host: string): Promise<TestServer> => {
      const server = await startServer((req, res) => {
        const id = String(req.headers['x-call']);
        bodies.set(id, (bodies.get(id) ?? 0) + 1);
        req.resume();
        req.on('end', () => reply(res, 200));
      }, host);
      servers.push(server);
      return server;
    };
    const a = await counting('127.0.0.1');
    const b = await counting('127.0.0.2');
    const refused = await refusedOrigin('127.0.0.3');
    const d = fleet([refused, a.origin, b.origin], { attempts: 1 });
    let requeues = 0;
    d.on('requeue', () => requeues++);
    for (let i = 0; i < 60; i++) {
      const method = i % 2 === 0 ? 'POST' : 'GET';
      const res = await d.request({
        method,
        path: '/orders',
        headers: { 'x-call': String(i) },
        ...(method === 'POST' ? { body: '{"n":1}' } : {}),
      });
      await res.body.dump();
      expect(res.status).toBe(200);
    }
    expect(a.seen.total + b.seen.total).toBe(60);
    expect(bodies.size).toBe(60);
    for (const count of bodies.values()) expect(count).toBe(1);
    // The refusing instance was tried (and its calls moved on without using the one attempt).
    expect(requeues).toBeGreaterThanOrEqual(1);
  });

  it('sends nothing again once a request may have reached the server (a reset after the write)', async () => {
    const resets = await startServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    }, '127.0.0.1');
    servers.push(resets);
    const other = await instance('127.0.0.2', () => 200);
    const d = fleet([resets.origin, other.origin], { attempts: 1 });
    let requeues = 0;
    d.on('requeue', () => requeues++);
    let failed = 0;
    for (let i = 0; i < 20; i++) {
      const outcome = await d
        .request({ method: 'POST', path: '/orders', body: '{"n":1}' })
        .then((res) => res.body.dump().then(() => 'ok'))
        .catch(() => 'failed');
      if (outcome === 'failed') failed++;
    }
    expect(requeues).toBe(0);
    expect(failed).toBe(resets.seen.total);
    expect(resets.seen.total + other.seen.total).toBe(20);
  });
});

describe('a sick instance that heals', () => {
  it('regains its share within ejection + slow start, never more than its slow-start share', async () => {
    let sickNow = true;
    // Arrival times on each server (ms, performance.now()).
    const arrivals: { healing: number[]; healthy: number[] } = { healing: [], healthy: [] };
    const timed = async (host: string, list: number[], status: () => number): Promise<TestServer> => {
      const server = await startServer((req, res) => {
        list.push(performance.now());
        req.resume();
        req.on('end', () => reply(res, status()));
      }, host);
      servers.push(server);
      return server;
    };
    const healing = await timed('127.0.0.1', arrivals.healing, () => (sickNow ? 503 : 200));
    const healthy = await timed('127.0.0.2', arrivals.healthy, () => 200);
    // Short, documented times so the test runs in a few seconds: out for 500 ms, back through one
    // probe, then a linear ramp from 10 % to 100 % of its share over 2 s; latency remembered for
    // 300 ms instead of 10 s (on a loaded machine the probe's answer can be slow, and the estimate
    // would keep the instance aside for longer than the test runs).
    const baseEjectionMs = 500;
    const slowStartMs = 2_000;
    const d = fleet([healing.origin, healthy.origin], {
      balancer: { baseEjectionMs, slowStartMs, slowStartMinShare: 0.1, decayMs: 300 },
    });
    let returnedAt = 0;
    d.on('instance-returned', () => {
      returnedAt = performance.now();
    });
    let ejectedAt = 0;
    d.on('instance-ejected', () => {
      ejectedAt = performance.now();
    });
    for (let i = 0; i < 100 && ejectedAt === 0; i++) await call(d);
    await sleep(0);
    expect(ejectedAt).toBeGreaterThan(0);
    sickNow = false;
    // Four callers, each calling every 2 ms, for ejection + slow start + 2 s.
    const end = ejectedAt + baseEjectionMs + slowStartMs + 2_000;
    const worker = async (): Promise<void> => {
      while (performance.now() < end) {
        expect(await call(d)).toBe(200);
        await sleep(2);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(returnedAt).toBeGreaterThan(0);
    const count = (list: number[], from: number, to: number): number =>
      list.filter((t) => t >= from && t < to).length;
    // No burst: in every 500 ms of the ramp, at most its slow-start share at the end of the slice
    // (plus two calls of slack for a slice cut in the middle of a pick).
    for (let t = returnedAt; t < returnedAt + slowStartMs; t += 500) {
      const mine = count(arrivals.healing, t, t + 500);
      const total = mine + count(arrivals.healthy, t, t + 500);
      const share = 0.1 + 0.9 * Math.min(1, (t + 500 - returnedAt) / slowStartMs);
      expect(mine).toBeLessThanOrEqual(share * total + 2);
    }
    // Regained: after the ramp, a real share of the calls (two equal instances: about half).
    const from = returnedAt + slowStartMs;
    const mine = count(arrivals.healing, from, end);
    const total = mine + count(arrivals.healthy, from, end);
    expect(total).toBeGreaterThan(40);
    expect(mine / total).toBeGreaterThanOrEqual(0.25);
    expect(d.instances().find((s) => s.origin === healing.origin)?.state).toBe('up');
  }, 20_000);
});
