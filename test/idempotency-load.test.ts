/**
 * Keyed POSTs in bulk with injected faults (answers lost after the order was made, answers slower
 * than the read timeout): no order twice, no call lost. And a Redis outage in the middle of a run.
 * Bounded: a fixed number of calls, a few in flight, each with its deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord, Dependency } from '../src/index.js';
import { type Fleet, type StoreKind, startFleet } from './support/idempotency-fleet.js';
import { REDIS_MISSING, type RedisServer, startRedis } from './support/redis-server.js';

let redis: RedisServer | undefined;
beforeAll(async () => {
  if (REDIS_MISSING === undefined) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const CALLS = 10_000;
const IN_FLIGHT = 48;
const WARM_UP_CALLS = 200;

/**
 * 10 % of the orders `order-<i>` fault: every 20th loses its answer, every 20th (offset 10) is slow.
 * The warm-up's calls (`warm-<w>`) do not.
 */
function faultOf(body: string): 'lost' | 'slow' | undefined {
  if (!body.startsWith('order-')) return undefined;
  const i = Number(body.slice('order-'.length));
  if (i % 20 === 0) return 'lost';
  if (i % 20 === 10) return 'slow';
  return undefined;
}

interface Outcome {
  ok: number;
  wrongAnswer: number;
  failed: { i: number; error: string }[];
}

/** Sends `count` keyed POSTs `order-<i>`, `IN_FLIGHT` at a time; each must get its own order back. */
async function run(dep: Dependency, from: number, count: number, inFlight = IN_FLIGHT): Promise<Outcome> {
  const outcome: Outcome = { ok: 0, wrongAnswer: 0, failed: [] };
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < from + count) {
      const i = next++;
      try {
        const res = await dep.request({ method: 'POST', path: '/orders', body: `order-${i}` });
        const answer = (await res.body.json()) as { body?: string };
        if (res.status === 201 && answer.body === `order-${i}`) outcome.ok++;
        else outcome.wrongAnswer++;
      } catch (error) {
        // The code, and each attempt's outcome: whether a lost call timed out waiting or was refused.
        const { code, attempts } = error as { code?: string; attempts?: readonly AttemptRecord[] };
        const tries = (attempts ?? []).map((a) => `${a.errorCode ?? a.status} ${a.durationMs} ms`);
        outcome.failed.push({ i, error: `${code ?? String(error)} (${tries.join(', ')})` });
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return outcome;
}

const kinds: { kind: StoreKind; skip: string | undefined; label: string }[] = [
  { kind: 'redis', skip: REDIS_MISSING, label: 'two replicas on one Redis' },
  { kind: 'memory', skip: undefined, label: 'one replica, in-memory store' },
];

describe.each(kinds)('10 000 keyed POSTs with 10 % faults, $label', ({ kind, skip }) => {
  it.skipIf(skip !== undefined)(
    'create every order exactly once and lose no call',
    async () => {
      const fleet: Fleet = await startFleet(kind, redis, { fault: faultOf, slowMs: 300 });
      try {
        // Read timeout 210 ms (p99 150 × 1.4) < the slow answers' 300 ms, with room on both sides
        // for a busy machine (at 80 ms and 150 ms, the runs beside the Prometheus test lost calls to
        // timeouts of every attempt). The budget allows the retries that one fault in ten needs
        // (the default 10 % would be spent to the last slot). The last attempt waits for its answer
        // until the deadline (docs/idempotency.md, "A slow first execution"): a keyed retry joins the
        // execution its key already started, and with `'read-timeout'` a machine that starves the
        // replicas for a moment (two busy loops beside this test, 2026-12-07) lost 1–9 calls a run,
        // each one three attempts of 210–260 ms that waited on one execution of an unfaulted order.
        const dep = fleet.client({
          latency: { p99Ms: 150, p95Ms: 75 },
          retryBudget: { maxRatio: 0.5 },
          lastAttempt: 'deadline',
        });
        // Warm up, one call at a time, without faults: cold replicas and a new Redis connection on a
        // busy machine outlive the 210 ms read timeout, and the test is about duplicates, not about
        // a cold start.
        for (let w = 0; w < WARM_UP_CALLS; w++) {
          const res = await dep.request({ method: 'POST', path: '/orders', body: `warm-${w}` });
          await res.body.dump();
        }
        const outcome = await run(dep, 0, CALLS);
        expect(outcome.failed.slice(0, 5)).toEqual([]);
        expect(outcome).toMatchObject({ ok: CALLS, wrongAnswer: 0 });
        expect(fleet.ledger.duplicates()).toBe(0);
        expect(fleet.ledger.orders).toHaveLength(WARM_UP_CALLS + CALLS);
        const replays = fleet.layers.reduce((n, l) => n + l.stats().replayed, 0);
        // Every lost answer (500 of them) was recovered by a replay.
        expect(replays).toBeGreaterThanOrEqual(CALLS / 20);
      } finally {
        await fleet.close();
      }
    },
    60_000,
  );
});

describe.each(['closed', 'open'] as const)('Redis stopped in the middle of a run, failing %s', (mode) => {
  it.skipIf(REDIS_MISSING !== undefined)(
    'keeps its fail mode, ends every call by its deadline, and recovers when Redis returns',
    async () => {
      const server = redis as RedisServer;
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      const fleet = await startFleet('redis', server, {}, { onStoreError: mode, storeTimeoutMs: 100 });
      const deadlineMs = 800;
      const dep = fleet.client({ userDeadlineMs: deadlineMs });
      try {
        const before = await run(dep, 0, 40, 4);
        expect(before.ok).toBe(40);

        await server.stop();
        const ordersBefore = fleet.ledger.orders.length;
        const started = Date.now();
        const during = await run(dep, 1_000, 24, 4);
        const slowest = (Date.now() - started) / (24 / 4);
        const madeDuring = fleet.ledger.orders.length - ordersBefore;
        if (mode === 'closed') {
          expect(madeDuring).toBe(0);
          expect(during.ok).toBe(0);
          expect(fleet.layers.reduce((n, l) => n + l.stats().failedClosed, 0)).toBeGreaterThan(0);
        } else {
          expect(during.ok).toBe(24);
          expect(fleet.layers.reduce((n, l) => n + l.stats().failedOpen, 0)).toBeGreaterThan(0);
        }
        // No call waited past its deadline (each batch of 4 in flight took at most one deadline).
        expect(slowest).toBeLessThan(deadlineMs + 300);

        await server.restart();
        let after: Awaited<ReturnType<typeof run>> = { ok: 0, wrongAnswer: 0, failed: [] };
        for (let round = 0; round < 50 && after.ok < 20; round++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          after = await run(dep, 2_000 + round * 20, 20, 4);
        }
        expect(after.ok).toBe(20);
        expect(fleet.ledger.duplicates()).toBe(0);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        await fleet.close();
        await server.restart();
      }
    },
    30_000,
  );
});
