import { describe, expect, it } from 'vitest';
import { isPrazoError, RetryAfterExceedsDeadlineError, RetryBudgetExhaustedError } from './errors.js';

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
});
