import type http from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { isPrazoError } from '../src/errors.js';
import { reply, startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  await dep?.close();
  await server?.close();
  dep = undefined;
  server = undefined;
  stop = undefined;
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/**
 * A supplier of known capacity: `workers()` workers, each busy `serviceMs` per request, and a FIFO
 * queue in front of them (a thread pool). Its Little's-law concurrency is `workers()` × a call's
 * round trip without a queue ÷ `serviceMs`: `workers()` only when the round trip is all service.
 */
async function supplier(workers: () => number, serviceMs: number): Promise<TestServer> {
  let busy = 0;
  const queue: http.ServerResponse[] = [];
  const serve = (res: http.ServerResponse): void => {
    busy++;
    setTimeout(() => {
      busy--;
      if (!res.destroyed) reply(res, 200);
      while (busy < workers() && queue.length > 0) serve(queue.shift()!);
    }, serviceMs);
  };
  return startServer((req, res) => {
    req.resume();
    if (busy < workers()) serve(res);
    else queue.push(res);
  });
}

/** `callers` loops that call again as soon as they get an answer, until `stop()`. */
function closedLoop(target: Dependency, callers: number): { stop(): void; done: Promise<unknown> } {
  let running = true;
  const loops = Array.from({ length: callers }, async () => {
    while (running) {
      try {
        const res = await target.request({ path: '/work' });
        await res.body.dump();
      } catch {
        await sleep(5); // CONCURRENCY_LIMITED: try again a little later
      }
    }
  });
  return {
    stop() {
      running = false;
    },
    done: Promise.all(loops),
  };
}

/** Reads the concurrency limit every 50 ms for `ms`. */
async function watchLimit(target: Dependency, ms: number): Promise<number[]> {
  const limits: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await sleep(50);
    limits.push(target.overload().concurrency!.limit);
  }
  return limits;
}

describe('adaptive concurrency against a supplier of known capacity', () => {
  it('settles within 25 % of its Little’s-law concurrency under 3× load, follows a capacity drop and recovers after it', async () => {
    const W = 16;
    const S = 40;
    let workers = W;
    server = await supplier(() => workers, S);
    dep = dependency({
      name: 'supplier',
      origins: [server.origin],
      latency: { p99Ms: 400 },
      userDeadlineMs: 5_000,
      attempts: 1,
      concurrency: { minLimit: 2, initialLimit: 20, windowMs: 100 },
    });
    const load = closedLoop(dep, 3 * W);
    stop = load.stop;

    // Each step is read from its last 1.5 s (30 readings). On a loaded 2-core machine the limit
    // settled within 1 s, fell to W / 4 + 1 within 1.6 s and came back within 25 % of W within 1.3 s
    // (18 within 2.3 s): every step leaves it 2 s or more before the readings it is judged on.
    // 3× the supplier's concurrency: the limit comes down from 20 to about W.
    const settled = median((await watchLimit(dep, 3_500)).slice(-30));
    // The no-load latency each step was judged against.
    const noLoad = (): number => dep!.overload().concurrency!.noLoadMs ?? Number.NaN;
    // And the probes so far by what started each (which one learnt it).
    const probes = (): string => JSON.stringify(dep!.overload().concurrency!.probes);
    const settledNoLoad = noLoad();
    const settledProbes = probes();
    // The overload: the supplier loses three quarters of its workers.
    workers = W / 4;
    const degraded = median((await watchLimit(dep, 3_500)).slice(-30));
    const degradedNoLoad = noLoad();
    const degradedProbes = probes();
    // Its capacity comes back.
    workers = W;
    const recovered = median((await watchLimit(dep, 4_000)).slice(-30));
    const recoveredNoLoad = noLoad();
    const recoveredProbes = probes();
    load.stop();
    await load.done;

    // Little's law: what keeps the W workers busy is their throughput (W / S calls a millisecond)
    // times a call's round trip without a queue — its S in a worker, and the time it spends outside
    // one (the sockets, both event loops), in which the worker waits for the next call unless one is
    // queued: W × noLoad / S, from the limiter's own no-load latency. That is W only when the round
    // trip is all service; on this machine it was 43 ms for S = 40 alone and 45–49 ms in CI runs
    // (2026-12-07/08), so 17–20 calls: a limit of 21 against W = 16 was a queue of 1–2, not of 5. The no-load latency must
    // itself be near S: one learnt in a queue (65.7 ms in a CI run of 2026-12-07, before the limiter
    // re-measured a latency learnt too high) would excuse a limit as high.
    const littles = (noLoadMs: number): number => (W * noLoadMs) / S;
    const ms = (x: number): string => `${x.toFixed(1)} ms`;
    const summary = `limit: settled ${settled} (no-load ${ms(settledNoLoad)}, Little's law ${littles(settledNoLoad).toFixed(1)}), with ${W / 4} workers ${degraded} (${ms(degradedNoLoad)}), recovered ${recovered} (${ms(recoveredNoLoad)}, Little's law ${littles(recoveredNoLoad).toFixed(1)}); probes by then: ${settledProbes}, ${degradedProbes}, ${recoveredProbes}`;
    for (const noLoadMs of [settledNoLoad, recoveredNoLoad])
      expect(noLoadMs, summary).toBeLessThanOrEqual(S * 1.3);
    expect(Math.abs(settled - littles(settledNoLoad)) / littles(settledNoLoad), summary).toBeLessThanOrEqual(
      0.25,
    );
    expect(degraded, summary).toBeLessThanOrEqual(W / 2);
    expect(
      Math.abs(recovered - littles(recoveredNoLoad)) / littles(recoveredNoLoad),
      summary,
    ).toBeLessThanOrEqual(0.25);
    expect(dep.overload().concurrency).toMatchObject({ inFlight: 0, queued: 0 });
  }, 30_000);
});

/**
 * A dependency that can accept `capacity()` calls a second (a token bucket) and answers 503 to the
 * rest. Counts what it received and what it accepted.
 */
async function rationed(capacity: () => number): Promise<{ server: TestServer; accepted: () => number }> {
  let tokens = 0;
  let last = performance.now();
  let accepted = 0;
  const s = await startServer((req, res) => {
    req.resume();
    const now = performance.now();
    const c = capacity();
    tokens = Math.min(Math.max(1, c / 10), tokens + ((now - last) * c) / 1000);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      accepted++;
      reply(res, 200);
    } else reply(res, 503);
  });
  return { server: s, accepted: () => accepted };
}

describe('adaptive throttling against a dependency that rejects 90 % of the calls', () => {
  it('counting local rejections (the SRE book), sends at most about 2× what it accepts (K = 2), then returns to full rate within the documented time', async () => {
    const offeredPerSecond = 400;
    const windowMs = 2_000;
    let capacity = offeredPerSecond / 10;
    const ration = await rationed(() => capacity);
    server = ration.server;
    dep = dependency({
      name: 'rationed',
      origins: [server.origin],
      // The server answers at once: an attempt that runs out of time here is a stall of this
      // process, not a refusal, yet the throttle rightly counts it as not accepted. A read timeout
      // of 420 ms (300 × 1.4, was 140) keeps such stalls out of what is judged. In both runs of a
      // CI on 2026-12-07 the throttle stayed closed to the end of the watch, as it would if the
      // client had counted few of the server's accepts (not reproduced here, beside each busy load
      // test, under CPU hogs or with stalls in this process); the summary names what calls ended with.
      latency: { p99Ms: 300 },
      userDeadlineMs: 1_000,
      attempts: 1,
      throttle: { k: 2, windowMs, countRejected: true },
    });
    // Open-loop load: 10 calls every 25 ms, whatever the answers.
    const outcomes: Array<{ atMs: number; code: string }> = [];
    const t0 = performance.now();
    let running = true;
    const pending = new Set<Promise<void>>();
    const driver = (async () => {
      for (let tick = 0; running; tick++) {
        for (let i = 0; i < 10; i++) {
          const p = dep!.request({ path: '/' }).then(
            (res) => res.body.dump(),
            (error: unknown) => {
              const code = isPrazoError(error) ? error.code : String(error);
              outcomes.push({ atMs: performance.now() - t0, code });
            },
          );
          const tracked = p.then(() => {
            pending.delete(tracked);
          });
          pending.add(tracked);
        }
        const wait = t0 + (tick + 1) * 25 - performance.now();
        await sleep(Math.max(0, wait));
      }
    })();
    stop = () => {
      running = false;
    };

    // Let the throttle's window fill, then measure 4 s at 90 % rejection. A stall of the machine
    // (timeouts, counted as rejections) can push the throttle far down; it climbs back by about
    // twice its accepts per window, so wait (up to 6 s) until the last second was accepted at three
    // quarters of the capacity or more.
    await sleep(windowMs);
    for (let waited = 0; waited < 6_000; waited += 1_000) {
      const before = ration.accepted();
      await sleep(1_000);
      if (ration.accepted() - before >= 0.75 * capacity) break;
    }
    const received0 = server.seen.total;
    const accepted0 = ration.accepted();
    const measuredFrom = performance.now() - t0;
    await sleep(4_000);
    const received = server.seen.total - received0;
    const accepted = ration.accepted() - accepted0;

    // The dependency accepts everything again.
    capacity = 1e9;
    const recoveredAt = performance.now() - t0;
    const bound = windowMs * (1 + Math.log(1 / (2 * 0.1)) / 2); // docs/overload.md: ≈ 3.6 s
    // The bound is the throttle's own arithmetic; on this shared machine the calls' answers, and so
    // the window's accepts, come late. On slow days (2026-12-07, 2026-12-06) the last local rejection
    // came 4.6–4.9 s after the dependency recovered, in both runs of one CI: 1.5 s of slack.
    const slackMs = 1_500;
    // Long enough to see a call throttled after the bound and its slack allow (it fails below).
    await sleep(bound + slackMs + 1_000);
    running = false;
    await driver;
    await Promise.all(pending);

    const lastThrottled = Math.max(...outcomes.filter((o) => o.code === 'THROTTLED').map((o) => o.atMs));
    // What the calls that got no answer ended with, in the 4 s measured and after the recovery.
    const tally = (from: number, to: number): string => {
      const counts = new Map<string, number>();
      for (const o of outcomes)
        if (o.atMs >= from && o.atMs < to) counts.set(o.code, (counts.get(o.code) ?? 0) + 1);
      return [...counts].map(([code, n]) => `${n} ${code}`).join(', ') || 'none';
    };
    const summary = `received ${received}, accepted ${accepted} (${(received / accepted).toFixed(2)}×); failed while measured: ${tally(measuredFrom, recoveredAt)}; after the recovery: ${tally(recoveredAt, Number.POSITIVE_INFINITY)}; full rate again after ${Math.round(lastThrottled - recoveredAt)} ms (bound ${Math.round(bound)} ms)`;
    // Without throttling it would receive the offered 400/s, 10× what it accepts.
    expect(accepted, summary).toBeGreaterThan(100);
    expect(received / accepted, summary).toBeLessThanOrEqual(2.5);
    expect(lastThrottled - recoveredAt, summary).toBeLessThanOrEqual(bound + slackMs);
  }, 30_000);
});
