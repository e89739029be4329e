import { describe, expect, it } from 'vitest';
import {
  DeadlineInsufficientError,
  isPrazoError,
  RetryAfterExceedsDeadlineError,
  RetryBudgetExhaustedError,
} from './errors.js';

describe('retry errors', () => {
  it('reports an exhausted budget with its code, the dependency and the last failure', () => {
    const last = new Error('503');
    const error = new RetryBudgetExhaustedError({ cause: last, dependency: 'inventory' });
    expect(isPrazoError(error, 'RETRY_BUDGET_EXHAUSTED')).toBe(true);
    expect(error.cause).toBe(last);
    expect(error.dependency).toBe('inventory');
    expect(error.message).toContain('inventory');
    expect(new RetryBudgetExhaustedError()).not.toHaveProperty('cause');
  });

  it('carries the server’s wait and the time that was left', () => {
    const error = new RetryAfterExceedsDeadlineError({ retryAfterMs: 2000, remainingMs: 900.7 });
    expect(error).toMatchObject({
      code: 'RETRY_AFTER_EXCEEDS_DEADLINE',
      retryAfterMs: 2000,
      remainingMs: 900.7,
    });
    expect(error.message).toBe(
      'The server asked to retry after 2000 ms, but only 900 ms are left before the deadline.',
    );
    expect(new RetryAfterExceedsDeadlineError({ retryAfterMs: 1, remainingMs: 0, cause: 'x' }).cause).toBe(
      'x',
    );
  });

  it('says the Retry-After story once, with the p99, when the p99 is known', () => {
    const error = new RetryAfterExceedsDeadlineError({ retryAfterMs: 1000, remainingMs: 599, p99Ms: 100 });
    expect(error.message).toBe(
      'The server asked to retry after 1000 ms; with a p99 of 100 ms that needs 1100 ms, but only 599 ms are left before the deadline.',
    );
    expect(error.message.match(/asked to retry/g)).toHaveLength(1);
  });

  it('never says "0 ms left" beside a negative remainingMs: it says how long ago the deadline passed', () => {
    const late = new RetryAfterExceedsDeadlineError({ retryAfterMs: 1000, remainingMs: -1000 });
    expect(late.remainingMs).toBe(-1000);
    expect(late.message).toBe(
      'The server asked to retry after 1000 ms, but the deadline passed 1000 ms ago.',
    );
    const insufficient = new DeadlineInsufficientError('inventory', -1000, 100);
    expect(insufficient.message).toBe(
      'Deadline too short for inventory: the deadline passed 1000 ms ago, its p99 needs 100 ms.',
    );
    expect(new DeadlineInsufficientError('inventory', 0, 100).message).toBe(
      'Deadline too short for inventory: no time left, its p99 needs 100 ms.',
    );
    expect(new DeadlineInsufficientError('inventory', 60.9, 100).message).toBe(
      'Deadline too short for inventory: 60 ms left, its p99 needs 100 ms.',
    );
  });
});
