import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  DeadlineExceededError,
  DeadlineInsufficientError,
  RetryBudgetExhaustedError,
} from '../errors.js';
import { findDeadlineError, MAX_CAUSE_DEPTH } from './deadline-scope.js';

/** `error` wrapped `levels` times, each wrapper holding the previous one as its `cause`. */
function wrap(error: unknown, levels: number): unknown {
  let current = error;
  for (let i = 0; i < levels; i++) current = new Error(`wrapper ${i}`, { cause: current });
  return current;
}

describe('findDeadlineError', () => {
  it('finds the prazo deadline error itself, or in the cause of what fetch and SDKs wrap it in', () => {
    const insufficient = new DeadlineInsufficientError('supplier', 100, 250);
    const exceeded = new DeadlineExceededError();
    expect(findDeadlineError(insufficient)).toBe(insufficient);
    expect(findDeadlineError(new TypeError('fetch failed', { cause: exceeded }))).toBe(exceeded);
    // axios: AxiosError('Network Error') whose cause is fetch's cause, or fetch's TypeError itself.
    const axiosLike = Object.assign(new Error('Network Error'), {
      isAxiosError: true,
      cause: new TypeError('fetch failed', { cause: insufficient }),
    });
    expect(findDeadlineError(axiosLike)).toBe(insufficient);
    expect(findDeadlineError(wrap(exceeded, MAX_CAUSE_DEPTH))).toBe(exceeded);
  });

  it('finds nothing in other errors, other prazo errors, or values that are not errors', () => {
    for (const value of [
      new Error('boom'),
      new TypeError('fetch failed', { cause: new CancelledError('gone') }),
      new RetryBudgetExhaustedError({ dependency: 'supplier' }),
      undefined,
      null,
      'DEADLINE_EXCEEDED',
      { code: 'DEADLINE_EXCEEDED' },
      42,
    ])
      expect(findDeadlineError(value)).toBeUndefined();
  });

  it('stops after MAX_CAUSE_DEPTH levels, at a cycle, and at a cause getter that throws', () => {
    expect(findDeadlineError(wrap(new DeadlineExceededError(), MAX_CAUSE_DEPTH + 1))).toBeUndefined();
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(findDeadlineError(a)).toBeUndefined();
    const self = new Error('self');
    (self as { cause?: unknown }).cause = self;
    expect(findDeadlineError(self)).toBeUndefined();
    const hostile = Object.defineProperty(new Error('hostile'), 'cause', {
      get() {
        throw new Error('no');
      },
    });
    expect(findDeadlineError(hostile)).toBeUndefined();
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(findDeadlineError(proxy)).toBeUndefined();
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (value) => {
        expect(findDeadlineError(value)).toBeUndefined();
        expect(findDeadlineError({ cause: value })).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
