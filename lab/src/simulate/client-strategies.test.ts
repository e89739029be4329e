import { callWithDeadline, createFakeClock, Deadline } from 'prazo';
import { calibrateTimeout } from 'prazo/policy';
import { describe, expect, it } from 'vitest';
import {
  createStrategy,
  fitsDeadline,
  readTimeoutOutcome,
  type SimUserRequest,
  type StrategyOptions,
} from './client-strategies.js';
import { createSimulation } from './engine.js';
import { createSimRandom } from './random.js';

const options: StrategyOptions = {
  attempts: 3,
  fixedTimeoutMs: 500,
  backoffBaseMs: 50,
  backoffCapMs: 1000,
  budgetWindowMs: 10_000,
  budgetMaxRatio: 0.1,
  budgetMinPerSecond: 0,
  slack: 1.4,
};

function setup(name: Parameters<typeof createStrategy>[0], overrides: Partial<StrategyOptions> = {}) {
  const sim = createSimulation(1_000_000);
  const strategy = createStrategy(
    name,
    { ...options, ...overrides },
    {
      clock: sim.clock,
      random: createSimRandom(1),
      healthyP99Ms: 80,
      userDeadlineMs: 1000,
    },
  );
  const request = (): SimUserRequest => {
    const r: SimUserRequest = { startMs: sim.now(), attemptsMade: 0, deadline: undefined };
    strategy.begin(r);
    return r;
  };
  return { sim, strategy, request };
}

const unavailable = { kind: 'response', status: 503 } as const;

describe('client strategies', () => {
  it('naive: retries at once until its attempts are spent, whatever the load', () => {
    const { strategy, request } = setup('naive');
    const r = request();
    r.attemptsMade = 1;
    expect(strategy.afterFailure(r, unavailable)).toEqual({ retry: true, delayMs: 0 });
    r.attemptsMade = 3;
    expect(strategy.afterFailure(r, unavailable)).toEqual({ retry: false, code: 'ATTEMPTS_EXHAUSTED' });
    expect(strategy.afterFailure({ ...r, attemptsMade: 1 }, { kind: 'response', status: 404 })).toEqual({
      retry: false,
      code: 'NOT_RETRYABLE',
    });
  });

  it('backoff: waits a jittered, growing delay before each retry but makes as many', () => {
    const { strategy, request } = setup('backoff');
    const r = request();
    const delays: number[] = [];
    for (let made = 1; made < 3; made++) {
      r.attemptsMade = made;
      const d = strategy.afterFailure(r, readTimeoutOutcome());
      expect(d.retry).toBe(true);
      if (d.retry) delays.push(d.delayMs);
    }
    expect(delays[0]).toBeLessThanOrEqual(50);
    expect(delays[1]).toBeLessThanOrEqual(100);
  });

  it('budget: stops retrying when the shared retry budget is spent', () => {
    const { strategy, request } = setup('budget');
    const requests = Array.from({ length: 20 }, request);
    const decisions = requests.map((r) => {
      r.attemptsMade = 1;
      return strategy.afterFailure(r, unavailable);
    });
    // 20 originals × 10 % = 2 extras.
    expect(decisions.filter((d) => d.retry)).toHaveLength(2);
    expect(decisions.at(-1)).toEqual({ retry: false, code: 'RETRY_BUDGET_EXHAUSTED' });
  });

  it("prazo: times attempts out at calibrateTimeout's read timeout and fails fast when the deadline cannot hold the p99", () => {
    const { sim, strategy, request } = setup('prazo');
    const expected = calibrateTimeout({ p99Ms: 80, userDeadlineMs: 1000, attempts: 3 }, { slack: 1.4 });
    expect(strategy.describe()).toMatchObject({
      attemptTimeoutMs: expected.readMs,
      attempts: expected.attempts,
    });
    const r = request();
    expect(strategy.precheck(r)).toBeNull();
    expect(strategy.attemptTimeoutMs(r)).toBe(expected.readMs);
    sim.run(sim.now() + 950);
    // 50 ms left: the attempt is capped by the deadline, and the check refuses it (p99 is 80 ms).
    expect(strategy.attemptTimeoutMs(r)).toBe(50);
    expect(strategy.precheck(r)).toBe('DEADLINE_INSUFFICIENT');
  });

  it('applies the pre-call rule exactly as callWithDeadline does', async () => {
    const cases: Array<[remainingMs: number, p99Ms: number]> = [
      [100, 80],
      [80, 80],
      [79, 80],
      [1, 0],
      [0, 0],
      [0, 5],
    ];
    for (const [remainingMs, p99Ms] of cases) {
      const clock = createFakeClock(1_000);
      const deadline = Deadline.after(remainingMs, clock);
      const called = await callWithDeadline(deadline, {
        p99Ms,
        name: 'dependency',
        run: async () => true,
      }).catch((error: { code?: string }) => error.code);
      deadline.dispose();
      expect(fitsDeadline(remainingMs, p99Ms), `${remainingMs} ms left, p99 ${p99Ms} ms`).toBe(
        called === true,
      );
      if (called !== true) expect(called).toBe('DEADLINE_INSUFFICIENT');
    }
  });
});
