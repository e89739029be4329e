import { describe, expect, it } from 'vitest';
import { judgeError } from '../policy/classify.js';
import type { AttemptInFlight } from './attempt-plan.js';
import { AttemptPlan } from './attempt-plan.js';

/** An attempt in flight that records the reasons it was aborted with. */
function attempt(instance: number): AttemptInFlight & { done: boolean; reasons: unknown[] } {
  const reasons: unknown[] = [];
  return {
    instance,
    origin: `http://127.0.0.1:${8000 + instance}`,
    done: false,
    dueAt: 0,
    byDeadline: false,
    timeoutMs: 0,
    reasons,
    abort(reason) {
      reasons.push(reason);
    },
  };
}

describe('the plan a step hands down for one attempt', () => {
  it('aborts the attempt it is given at once when it was aborted before the attempt started', () => {
    const plan = new AttemptPlan('original');
    const reason = new Error('lost');
    plan.abort(reason);
    const sent = attempt(0);
    plan.sent(sent);
    expect(sent.reasons).toEqual([reason]);
  });

  it('aborts its attempt while it is in flight and leaves a finished one alone', () => {
    const plan = new AttemptPlan('original');
    const sent = attempt(0);
    plan.sent(sent);
    plan.abort('first');
    sent.done = true;
    plan.abort('second');
    expect(sent.reasons).toEqual(['first']);
  });

  it('gives a hedge copy its first copy as the try, and the try the attempt sent last', () => {
    const first = new AttemptPlan('retry');
    expect(first.first).toBe(first);
    const original = attempt(0);
    first.sent(original);
    expect(first.lastSent).toBe(original);
    const copy = new AttemptPlan('hedge', 1, first);
    expect(copy.first).toBe(first);
    expect(copy.instance).toBe(1);
    const hedge = attempt(1);
    copy.sent(hedge);
    expect(copy.attempt).toBe(hedge);
    expect(first.attempt).toBe(original);
    expect(first.lastSent).toBe(hedge);
  });

  it('knows how the attempt step judged the error either copy of the try failed with, and no other', () => {
    const first = new AttemptPlan('original');
    const copy = new AttemptPlan('hedge', 1, first);
    const refused = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    expect(first.verdictOf(refused)).toBeNull();
    const refusedVerdict = judgeError(refused, { idempotent: true });
    const resetVerdict = judgeError(reset, { idempotent: true });
    first.failed(refused, refusedVerdict);
    copy.failed(reset, resetVerdict);
    expect(first.verdictOf(refused)).toBe(refusedVerdict);
    expect(first.verdictOf(reset)).toBe(resetVerdict);
    expect(first.verdictOf(new Error('other'))).toBeNull();
    expect(first.failure).toBe(refusedVerdict);
  });
});
