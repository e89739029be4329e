import { createFakeClock } from 'prazo';
import { describe, expect, it } from 'vitest';
import { createRandom, type Random } from './random.js';
import { createWorkerQueue } from './worker-queue.js';

/** Erlang C: the probability that an arrival waits in an M/M/c queue of offered load a = λ/μ. */
function erlangC(c: number, a: number): number {
  let term = 1;
  let sum = 1;
  for (let k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  const last = (term * a) / c / (1 - a / c);
  return last / (sum + last);
}

const exponential = (random: Random, meanMs: number) => -Math.log(1 - random()) * meanMs;

/**
 * Drives a worker queue on a fake clock: `count` Poisson arrivals at `rps` (each scheduled as the
 * previous one arrives, so the clock holds few timers), each holding a worker for `serviceMs(startMs)`
 * from the instant a worker takes it. Returns each request's arrival instant and wait for a worker.
 */
function run(
  workers: number,
  random: Random,
  rps: number,
  count: number,
  serviceMs: (startMs: number) => number,
): Array<{ atMs: number; waitMs: number }> {
  const clock = createFakeClock();
  const queue = createWorkerQueue(workers);
  const requests: Array<{ atMs: number; waitMs: number }> = [];
  const arrive = (): void => {
    const request = { atMs: clock.now(), waitMs: Number.NaN };
    requests.push(request);
    queue.submit((done) => {
      request.waitMs = clock.now() - request.atMs;
      clock.setTimeout(done, serviceMs(clock.now()));
    });
    if (requests.length < count) clock.setTimeout(arrive, exponential(random, 1000 / rps));
  };
  clock.setTimeout(arrive, exponential(random, 1000 / rps));
  while (clock.pendingTimers() > 0) clock.advance(60_000);
  expect(queue.stats()).toMatchObject({ busy: 0, waiting: 0, finished: count });
  return requests;
}

const mean = (values: readonly number[]) => values.reduce((s, v) => s + v, 0) / values.length;
const meanWait = (requests: ReadonlyArray<{ waitMs: number }>) => mean(requests.map((r) => r.waitMs));

describe('worker queue', () => {
  it('starts a job at once while a worker is free, queues the rest in order, and counts its peak', () => {
    const queue = createWorkerQueue(1);
    const order: string[] = [];
    const finish: Array<() => void> = [];
    for (const name of ['a', 'b', 'c']) {
      queue.submit((done) => {
        order.push(name);
        finish.push(done);
      });
    }
    expect(order).toEqual(['a']);
    expect(queue.stats()).toMatchObject({ busy: 1, waiting: 2, peakWaiting: 2 });
    finish[0]!();
    finish[0]!(); // a second done() of the same job releases nothing
    expect(order).toEqual(['a', 'b']);
    expect(queue.takePeakWaiting()).toBe(2);
    expect(queue.takePeakWaiting()).toBe(1);
    queue.clear();
    finish[1]!();
    expect(queue.stats()).toMatchObject({ busy: 0, waiting: 0, finished: 2 });
  });

  it('refuses a worker count that is not a positive integer', () => {
    expect(() => createWorkerQueue(0)).toThrow(RangeError);
    expect(() => createWorkerQueue(1.5)).toThrow(RangeError);
  });

  // M/M/c: Poisson arrivals, exponential service, c workers. The mean wait is exact theory:
  // Wq = C(c, a) / (c μ − λ) (Erlang C). 40 000 requests per point; the tolerance (15 %) covers the
  // simulation's own noise, which grows with utilisation.
  it.each([0.3, 0.6, 0.8])(
    'the wait for a worker grows with utilisation as M/M/c predicts (ρ = %s)',
    (rho) => {
      const workers = 2;
      const serviceMs = 72;
      const rps = (rho * workers * 1000) / serviceMs;
      const random = createRandom(Math.round(rho * 100));
      const waits = meanWait(run(workers, random, rps, 40_000, () => exponential(random, serviceMs)));
      const a = (rps * serviceMs) / 1000;
      const theory = erlangC(workers, a) / (workers / serviceMs - rps / 1000);
      expect(waits).toBeGreaterThan(theory * 0.85);
      expect(waits).toBeLessThan(theory * 1.15);
    },
  );

  // M/D/1: deterministic service, one worker. Pollaczek–Khinchine: Wq = ρ D / (2 (1 − ρ)).
  it.each([0.5, 0.8])('the wait for a worker follows Pollaczek–Khinchine for M/D/1 (ρ = %s)', (rho) => {
    const serviceMs = 50;
    const rps = (rho * 1000) / serviceMs;
    const waits = meanWait(run(1, createRandom(7), rps, 40_000, () => serviceMs));
    const theory = (rho * serviceMs) / (2 * (1 - rho));
    expect(waits).toBeGreaterThan(theory * 0.85);
    expect(waits).toBeLessThan(theory * 1.15);
  });

  // The drill's trigger: a healthy supplier at 60 % utilisation, its service time tripled for 3 s.
  // Without retries the backlog built during the trigger drains at the spare capacity, c μ − λ:
  // within about backlog / (c μ − λ) of the trigger's end the wait is back to its healthy level.
  it('recovers on its own after a 3 s capacity drop when nobody retries', () => {
    const workers = 2;
    const serviceMs = 72;
    const rho = 0.6;
    const rps = (rho * workers * 1000) / serviceMs;
    const random = createRandom(11);
    const triggerFrom = 20_000;
    const triggerTo = 23_000;
    // The capacity drop acts on the work a worker takes up during it.
    const requests = run(
      workers,
      random,
      rps,
      Math.round(rps * 40),
      (startMs) => (startMs >= triggerFrom && startMs < triggerTo ? 3 : 1) * exponential(random, serviceMs),
    );
    const healthy = meanWait(requests.filter((r) => r.atMs < triggerFrom));
    const during = meanWait(requests.filter((r) => r.atMs >= triggerTo - 500 && r.atMs < triggerTo));
    expect(during).toBeGreaterThan(10 * healthy);
    // Backlog ≈ (λ − cμ/3) × 3 s ≈ 22 requests, drained at cμ − λ ≈ 11 per second: about 2 s.
    const settled = meanWait(requests.filter((r) => r.atMs >= triggerTo + 4_000));
    expect(settled).toBeLessThan(2 * healthy + 10);
  });

  // The same trigger with clients that time out and retry at once (3 attempts, the timeout twice the
  // healthy p99 of the service, the abandoned attempt still served): the extra load keeps the
  // supplier above its capacity after the trigger has gone, and it does not recover — a metastable
  // failure (Bronson et al., HotOS 2021).
  it('stays down after the same trigger when its callers retry what timed out', () => {
    const workers = 2;
    const serviceMs = 72;
    const rps = (0.6 * workers * 1000) / serviceMs;
    const timeoutMs = 2 * 4.6 * serviceMs;
    const clock = createFakeClock();
    const queue = createWorkerQueue(workers);
    const random = createRandom(13);
    const triggerFrom = 5_000;
    const triggerTo = 8_000;
    const endMs = 30_000;
    const outcomes: Array<{ atMs: number; ok: boolean }> = [];
    const call = (startedAt: number, attempt: number): void => {
      const sentAt = clock.now();
      let answered = false;
      const timer = clock.setTimeout(() => {
        if (answered) return;
        answered = true;
        if (attempt < 3) call(startedAt, attempt + 1);
        else outcomes.push({ atMs: startedAt, ok: false });
      }, timeoutMs);
      queue.submit((done) => {
        const now = clock.now();
        const factor = now >= triggerFrom && now < triggerTo ? 3 : 1;
        clock.setTimeout(() => {
          done();
          if (answered) return;
          answered = true;
          clock.clearTimeout(timer);
          outcomes.push({ atMs: startedAt, ok: clock.now() - sentAt <= timeoutMs });
        }, factor * exponential(random, serviceMs));
      });
    };
    let at = 0;
    while (at < endMs) {
      at += exponential(random, 1000 / rps);
      clock.setTimeout(() => call(clock.now(), 1), at - clock.now());
    }
    clock.advance(endMs);
    const share = (from: number, to: number) => {
      const inRange = outcomes.filter((o) => o.atMs >= from && o.atMs < to);
      return inRange.filter((o) => o.ok).length / Math.max(1, inRange.length);
    };
    expect(share(0, triggerFrom)).toBeGreaterThan(0.95);
    // 15 s after the trigger's end, still far from healthy.
    expect(share(triggerTo + 15_000, endMs - 2_000)).toBeLessThan(0.5);
  });
});
