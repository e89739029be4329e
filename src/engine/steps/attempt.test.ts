import { describe, expect, it } from 'vitest';
import { judgeError } from '../../policy/classify.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import { TEST_START_MS } from '../../testing/test-dependency.js';
import { Call } from '../call.js';
import type { DependencyContext } from '../pipeline.js';
import { Attempt } from './attempt.js';

const clock = createFakeClock(TEST_START_MS);
/** What an attempt reads of its dependency before it is sent: the read timeout in force. */
const ctx = { policy: { readMs: 100 } } as unknown as DependencyContext;

/** A call whose deadline is `leftMs` from now. */
function callWith(leftMs: number): Call {
  const call = new Call(1, { path: '/stock' }, clock);
  call.begin(clock.now(), clock.now() + leftMs, String(clock.now() + leftMs));
  return call;
}

/** Starts `attempt` as the attempt step does, on `instance`. */
function start(attempt: Attempt, instance: number, number: number): Attempt {
  attempt.start(instance, true, `http://127.0.0.1:${8000 + instance}`, [], number, clock.now());
  return attempt;
}

describe('one attempt, the handle of the step that made it', () => {
  it('is sent aborted, with its reason, when it was aborted before it started', () => {
    const attempt = Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now());
    const reason = new Error('lost');
    attempt.abort(reason);
    start(attempt, 0, 1);
    // What the transport reads of its signal: it drops the request unsent.
    expect(attempt.aborted).toBe(true);
    expect(attempt.reason).toBe(reason);
  });

  it('aborts once while in flight, telling its listener, and leaves a finished one alone', () => {
    const attempt = start(Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now()), 0, 1);
    const heard: unknown[] = [];
    attempt.addEventListener('abort', () => heard.push(attempt.reason));
    attempt.abort('first');
    attempt.abort('again');
    expect(heard).toEqual(['first']);
    const finished = start(Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now()), 0, 2);
    finished.done = true;
    finished.abort('late');
    expect(finished.aborted).toBe(false);
  });

  it('gives a hedge copy its first copy as the try, and the try the attempt sent last', () => {
    const first = Attempt.forTry(ctx, callWith(1_000), 'retry', 2, clock.now());
    expect(first.first).toBe(first);
    expect(first.lastSent).toBeNull();
    start(first, 0, 1);
    expect(first.lastSent).toBe(first);
    const copy = Attempt.hedge(first, 1);
    expect(copy.first).toBe(first);
    expect(copy.instance).toBe(1);
    expect(copy.kind).toBe('hedge');
    // A copy not yet sent is not the try's last.
    expect(first.lastSent).toBe(first);
    start(copy, 1, 2);
    expect(first.lastSent).toBe(copy);
  });

  it('ends every copy by the try bound, a retry sent beside by the deadline', () => {
    const first = Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now());
    expect([first.tryTimeoutMs, first.tryByDeadline]).toEqual([100, false]);
    start(first, 0, 1);
    expect([first.dueAt, first.timeoutMs]).toEqual([TEST_START_MS + 100, 100]);
    // The first copy waits past its read timeout (`lastAttempt: 'deadline'`): its own bound moves,
    // the try's does not, and a copy sent then still ends by the try's.
    first.dueAt = TEST_START_MS + 1_000;
    first.byDeadline = true;
    const copy = start(Attempt.hedge(first, 1), 1, 2);
    expect([copy.dueAt, copy.byDeadline, copy.timeoutMs]).toEqual([TEST_START_MS + 100, false, 100]);
    const beside = start(Attempt.beside(first, 2, clock.now()), 2, 3);
    expect([beside.dueAt, beside.byDeadline, beside.kind]).toEqual([TEST_START_MS + 1_000, true, 'retry']);
    // A try with less time left than the read timeout is bounded by the deadline.
    const late = Attempt.forTry(ctx, callWith(40), 'retry', 2, clock.now());
    expect([late.tryTimeoutMs, late.tryByDeadline]).toEqual([40, true]);
  });

  it('counts one winner per try: the first copy to claim it', () => {
    const first = start(Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now()), 0, 1);
    const copy = start(Attempt.hedge(first, 1), 1, 2);
    expect(copy.claim()).toBe(true);
    expect(first.claim()).toBe(false);
    expect(first.winner).toBe(copy);
  });

  it('knows how the attempt step judged the error either copy of the try failed with, and no other', () => {
    const first = Attempt.forTry(ctx, callWith(1_000), 'original', 1, clock.now());
    const copy = Attempt.hedge(first, 1);
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
