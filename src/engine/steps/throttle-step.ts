import { isPrazoError, ThrottledError } from '../../errors.js';
import { acceptedStatus } from '../../policy/adaptive-throttle.js';
import { timeoutOfCode } from '../../policy/classify.js';
import type { Call, DependencyResponse } from '../call.js';
import { withHistory } from '../history.js';
import type { DependencyContext } from '../pipeline.js';

/*
 * Adaptive throttling of a call (on with `throttle`; run by the overload step, overload-step.ts):
 * before anything is sent, the call is rejected locally with the throttle's probability
 * (`policy/adaptive-throttle.ts`), failing with `THROTTLED`; otherwise its outcome is counted when
 * it ends.
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
 * - **not counted either, by default**: a call the throttle rejected (with `countRejected`, a request
 *   but not an accept, as the SRE book prescribes).
 *
 * A throttled call never reached the dependency: the retry budget counts it as refused
 * (`recordRefused`), and the `limited` event says `reason: 'throttle'`.
 *
 * See docs/overload.md; Google SRE book, "Handling Overload", client-side throttling.
 */

/** Whether the dependency accepted the call that got `response` (see above). */
export function acceptedAnswer(call: Call, response: DependencyResponse): boolean {
  // An attempt that ran out of time was work the dependency did not accept in time, even when a
  // retry was then answered (only a call with more than one attempt can hold one).
  return acceptedStatus(response.status) && (call.attemptCount === 1 || !anyTimedOut(response.attempts));
}

/**
 * Whether a call that ended in `error` counts (as not accepted): not when the error says nothing of
 * the dependency (the caller cancelled, `close()`, the concurrency limit refused it).
 */
export function throttleCounts(ctx: DependencyContext, call: Call, error: unknown): boolean {
  return call.cancelled === null && !ctx.closed && !isPrazoError(error, 'CONCURRENCY_LIMITED');
}

function anyTimedOut(attempts: DependencyResponse['attempts']): boolean {
  for (const attempt of attempts) {
    const code = attempt.errorCode;
    if (code === 'READ_TIMEOUT' || code === 'DEADLINE_EXCEEDED' || timeoutOfCode(code) === 'read')
      return true;
  }
  return false;
}

/** The error of a call the throttle rejected with `probability` (> 0), counted as refused. */
export function throttled(ctx: DependencyContext, probability: number, call: Call, nowMs: number): Error {
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
