import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { type Classification, classify } from './classify.js';
import { type PlanRetryInput, planRetry } from './plan-retry.js';
import { createRetryBudget, type RetryBudget } from './retry-budget.js';

const status503: Classification = {
  retry: true,
  phase: 'response',
  reason: 'status-503',
  anotherInstance: false,
};
const refused: Classification = {
  retry: true,
  phase: 'connect',
  reason: 'connect-refused',
  anotherInstance: true,
};

function freshBudget(): RetryBudget {
  return createRetryBudget({ clock: createFakeClock(0) });
}

function emptyBudget(): RetryBudget {
  const budget = createRetryBudget({ minPerSecond: 0, clock: createFakeClock(0) });
  expect(budget.tryConsume()).toBe(false);
  return budget;
}

function input(overrides: Partial<PlanRetryInput>): PlanRetryInput {
  return {
    classification: status503,
    attemptsMade: 1,
    maxAttempts: 3,
    remainingMs: 1000,
    p99Ms: 180,
    budget: freshBudget(),
    random: () => 0.5,
    ...overrides,
  };
}

describe('planRetry', () => {
  it('refuses a failure that is not retryable, without touching the budget', () => {
    const budget = freshBudget();
    const classification = classify({ kind: 'response', status: 404 }, { idempotent: true });
    expect(planRetry(input({ classification, budget }))).toMatchObject({
      retry: false,
      code: 'NOT_RETRYABLE',
    });
    expect(budget.state().extras).toBe(0);
  });

  it('refuses once every attempt was made, without touching the budget', () => {
    const budget = freshBudget();
    expect(planRetry(input({ attemptsMade: 3, maxAttempts: 3, budget }))).toMatchObject({
      retry: false,
      code: 'ATTEMPTS_EXHAUSTED',
    });
    expect(budget.state().extras).toBe(0);
  });

  it('waits exactly the Retry-After the server gave, with no jitter', () => {
    const classification = { ...status503, retryAfterMs: 300 };
    for (const r of [0, 0.5, 0.99]) {
      expect(planRetry(input({ classification, random: () => r }))).toEqual({
        retry: true,
        delayMs: 300,
        anotherInstance: false,
      });
    }
  });

  it('fails fast when Retry-After plus the p99 does not fit the deadline, and spends no budget', () => {
    const budget = freshBudget();
    const classification = classify(
      { kind: 'response', status: 429, headers: { 'retry-after': '2' } },
      { idempotent: false },
    );
    const plan = planRetry(input({ classification, remainingMs: 2179, p99Ms: 180, budget }));
    expect(plan).toMatchObject({ retry: false, code: 'RETRY_AFTER_EXCEEDS_DEADLINE' });
    expect(plan.retry === false && plan.reason).toContain('2000 ms');
    expect(budget.state().extras).toBe(0);
    // One more millisecond and it fits.
    expect(planRetry(input({ classification, remainingMs: 2180, p99Ms: 180 }))).toEqual({
      retry: true,
      delayMs: 2000,
      anotherInstance: false,
    });
  });

  it('retries a connect failure at once, on another instance', () => {
    expect(planRetry(input({ classification: refused, attemptsMade: 2 }))).toEqual({
      retry: true,
      delayMs: 0,
      anotherInstance: true,
    });
  });

  it('backs off exponentially with full jitter otherwise', () => {
    expect(planRetry(input({ attemptsMade: 1, random: () => 0.5 }))).toMatchObject({ delayMs: 25 });
    expect(planRetry(input({ attemptsMade: 2, random: () => 0.5 }))).toMatchObject({ delayMs: 50 });
    expect(
      planRetry(input({ attemptsMade: 2, random: () => 0.5, backoff: { baseMs: 100, capMs: 150 } })),
    ).toMatchObject({ delayMs: 75 });
  });

  it('shortens the backoff so that the attempt still has its p99 before the deadline', () => {
    const plan = planRetry(
      input({ attemptsMade: 6, remainingMs: 200, p99Ms: 180, random: () => 0.99, maxAttempts: 10 }),
    );
    expect(plan).toEqual({ retry: true, delayMs: 20, anotherInstance: false });
  });

  it('refuses when not even an immediate attempt of p99 fits, and spends no budget', () => {
    const budget = freshBudget();
    for (const classification of [status503, refused]) {
      expect(planRetry(input({ classification, remainingMs: 179, p99Ms: 180, budget }))).toMatchObject({
        retry: false,
        code: 'DEADLINE_INSUFFICIENT',
      });
    }
    expect(budget.state().extras).toBe(0);
  });

  it('never says "0 ms left" when the deadline already passed: it says how long ago', () => {
    const plan = planRetry(input({ classification: status503, remainingMs: -1000, p99Ms: 180 }));
    expect(plan).toMatchObject({ retry: false, code: 'DEADLINE_INSUFFICIENT' });
    const reason = (plan as { reason: string }).reason;
    expect(reason).toContain('the deadline passed 1000 ms ago');
    expect(reason).not.toContain('0 ms left');
  });

  it('asks the budget last, and spends it only when it says yes', () => {
    expect(planRetry(input({ budget: emptyBudget() }))).toMatchObject({
      retry: false,
      code: 'RETRY_BUDGET_EXHAUSTED',
    });
    const budget = freshBudget();
    expect(planRetry(input({ budget })).retry).toBe(true);
    expect(budget.state().extras).toBe(1);
  });

  it('allows an unbounded deadline', () => {
    expect(planRetry(input({ remainingMs: Number.POSITIVE_INFINITY, random: () => 0 }))).toEqual({
      retry: true,
      delayMs: 0,
      anotherInstance: false,
    });
  });

  it('rejects programming errors by name', () => {
    const cases: Array<[string, Partial<PlanRetryInput>]> = [
      ['attemptsMade', { attemptsMade: -1 }],
      ['maxAttempts', { maxAttempts: 1.5 }],
      ['remainingMs', { remainingMs: Number.NaN }],
      ['p99Ms', { p99Ms: -1 }],
    ];
    for (const [option, overrides] of cases) {
      expect(() => planRetry(input(overrides))).toThrow(InvalidOptionError);
      expect(() => planRetry(input(overrides))).toThrow(`\`${option}\``);
    }
  });
});
