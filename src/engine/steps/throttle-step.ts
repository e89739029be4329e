import { isPrazoError, ThrottledError } from '../../errors.js';
import { type AdaptiveThrottle, acceptedStatus } from '../../policy/adaptive-throttle.js';
import { timeoutOfCode } from '../../policy/classify.js';
import type { Call, DependencyResponse } from '../call.js';
import { withHistory } from '../history.js';
import type { DependencyContext, Handler, Step } from '../pipeline.js';

/**
 * The adaptive throttling step (on with `throttle`): before anything is sent, rejects the call
 * locally with the throttle's probability (`policy/adaptive-throttle.ts`), failing with `THROTTLED`;
 * otherwise counts the call's outcome when it ends.
 *
 * What counts (one call = one request, its retries included — the retry budget already bounds them):
 * - **accepted**: any answer except 429, 502, 503 and 504 — a 404 or a 422 is the dependency doing
 *   its work, and so is a 500 (a bug is not overload) — unless one of the call's attempts ran out
 *   of time;
 * - **not accepted**: a 429, 502, 503 or 504 answer, a call that got no answer at all (a
 *   timeout, a refused or reset connection, a retry refused after one of those), and a call one of
 *   whose attempts ran out of time even if a retry was answered (the SRE book's "accepted": the
 *   dependency did not take that work in time);
 * - **not counted**: a call the caller cancelled, or that the dependency's `close()` ended, or that
 *   the concurrency limit refused (it never left);
 * - **not counted either, by default**: a call this step rejected (with `countRejected`, a request
 *   but not an accept, as the SRE book prescribes).
 *
 * A throttled call never reached the dependency: the retry budget counts it as refused
 * (`recordRefused`), and the `limited` event says `reason: 'throttle'`.
 *
 * @see docs/overload.md; Google SRE book, "Handling Overload", client-side throttling.
 */
export function throttleStep(ctx: DependencyContext, throttle: AdaptiveThrottle): Step {
  return (next) => (call, now) => {
    const probability = throttle.reject(now, ctx.random());
    if (probability > 0) return Promise.reject(throttled(ctx, probability, call, now));
    return counted(ctx, throttle, call, next, now);
  };
}

/** Sends the call and counts its outcome. Not an `async` function (see `held` in concurrency-step.ts). */
function counted(
  ctx: DependencyContext,
  throttle: AdaptiveThrottle,
  call: Call,
  next: Handler,
  nowMs: number,
): Promise<DependencyResponse> {
  let sent: Promise<DependencyResponse>;
  try {
    sent = next(call, nowMs);
  } catch (error) {
    return Promise.reject(notAccepted(ctx, throttle, call, error));
  }
  return sent.then(
    (response) => {
      // An attempt that ran out of time was work the dependency did not accept in time, even when
      // a retry was then answered (only a call with more than one attempt can hold one).
      throttle.record(
        acceptedStatus(response.status) && (call.attemptCount === 1 || !anyTimedOut(response.attempts)),
        ctx.clock.now(),
      );
      return response;
    },
    (error: unknown) => {
      throw notAccepted(ctx, throttle, call, error);
    },
  );
}

/** Counts a call that ended in `error` as not accepted, unless it says nothing of the dependency. */
function notAccepted(
  ctx: DependencyContext,
  throttle: AdaptiveThrottle,
  call: Call,
  error: unknown,
): unknown {
  if (call.cancelled === null && !ctx.closed && !isPrazoError(error, 'CONCURRENCY_LIMITED'))
    throttle.record(false, ctx.clock.now());
  return error;
}

function anyTimedOut(attempts: DependencyResponse['attempts']): boolean {
  for (const attempt of attempts) {
    const code = attempt.errorCode;
    if (code === 'READ_TIMEOUT' || code === 'DEADLINE_EXCEEDED' || timeoutOfCode(code) === 'read')
      return true;
  }
  return false;
}

function throttled(ctx: DependencyContext, probability: number, call: Call, nowMs: number): Error {
  ctx.budget.recordRefused?.();
  if (ctx.events.has('limited'))
    ctx.events.emit('limited', {
      dependency: ctx.name,
      requestId: call.id,
      reason: 'throttle',
      probability,
      remainingMs: call.limitMs - nowMs,
    });
  return withHistory(new ThrottledError(ctx.name, probability), call, ctx.name);
}
