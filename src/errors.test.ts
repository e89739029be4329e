import { describe, expect, it } from 'vitest';
import {
  AttemptAbandonedError,
  BodyDestroyedError,
  DeadlineInsufficientError,
  InvalidOptionError,
  isPrazoError,
  PrazoError,
} from './errors.js';

describe('errors', () => {
  it('names the rejected option and the expected value', () => {
    const error = new InvalidOptionError('p99Ms', 'a finite number > 0', Number.NaN);
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.option).toBe('p99Ms');
    expect(error.message).toBe('Expected `p99Ms` to be a finite number > 0, got NaN.');
  });

  it('carries the numbers that explain a fast fail', () => {
    const error = new DeadlineInsufficientError('supplier', 100, 250);
    expect(error).toMatchObject({ code: 'DEADLINE_INSUFFICIENT', remainingMs: 100, requiredMs: 250 });
    expect(error.message).toContain('supplier');
  });

  it('recognises prazo errors by code, also across copies of the class', () => {
    const foreign = Object.assign(new Error('x'), { name: 'PrazoError', code: 'CANCELLED' });
    expect(isPrazoError(foreign, 'CANCELLED')).toBe(true);
    expect(isPrazoError(new PrazoError('CANCELLED', 'x'), 'DEADLINE_EXCEEDED')).toBe(false);
    expect(isPrazoError(new Error('x'))).toBe(false);
    expect(isPrazoError(null)).toBe(false);
  });

  it('gives the errors of an abandoned attempt and of a destroyed body their codes, as prazo errors', () => {
    expect(isPrazoError(new AttemptAbandonedError('lost'), 'ATTEMPT_ABANDONED')).toBe(true);
    const destroyed = new BodyDestroyedError();
    expect(isPrazoError(destroyed, 'BODY_DESTROYED')).toBe(true);
    expect(destroyed.message).toBe('Response body destroyed before its end.');
  });
});
