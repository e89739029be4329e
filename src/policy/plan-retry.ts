import { describeTimeLeft, InvalidOptionError } from '../errors.js';
import { backoffDelayMs } from './backoff.js';
import type { Classification } from './classify.js';
import type { RetryBudget } from './retry-budget.js';

/** Why {@link planRetry} refused another attempt. */
export type RetryRefusalCode =
  | 'NOT_RETRYABLE'
  | 'ATTEMPTS_EXHAUSTED'
  | 'RETRY_BUDGET_EXHAUSTED'
  | 'RETRY_AFTER_EXCEEDS_DEADLINE'
  | 'DEADLINE_INSUFFICIENT';

/** The decision on one extra attempt. */
export type RetryPlan =
  | {
      retry: true;
      /** Wait before the next attempt, in ms (0 after a connect failure). */
      delayMs: number;
      /** Send the next attempt to a different instance (the last one is unreachable). */
      anotherInstance: boolean;
    }
  | {
      retry: false;
      code: RetryRefusalCode;
      /** One sentence for logs and error messages, with the numbers that explain it. */
      reason: string;
    };

/** What {@link planRetry} needs to decide. Every duration is in ms. */
export interface PlanRetryInput {
  /** Verdict on the attempt that just failed (see `classify`). */
  classification: Classification;
  /** Attempts already made for this request, the failed one included (≥ 1). */
  attemptsMade: number;
  /** Attempts allowed for this request, the first one included. */
  maxAttempts: number;
  /** Time left before the request's deadline (`Infinity` when there is none). */
  remainingMs: number;
  /** The dependency's p99: the least time the next attempt needs to have a chance. */
  p99Ms: number;
  /** The dependency's shared retry budget; spent only when everything else says yes. */
  budget: RetryBudget;
  /** Uniform source in [0, 1) for the jitter. @default Math.random */
  random?: () => number;
  /** Exponential backoff bounds (see `backoffDelayMs`). @default { baseMs: 50, capMs: 2000 } */
  backoff?: { baseMs?: number; capMs?: number };
}

/**
 * The one decision the client asks before each extra attempt. In this order:
 *
 * 1. a failure that is not retryable → `NOT_RETRYABLE`;
 * 2. no attempt left → `ATTEMPTS_EXHAUSTED`;
 * 3. the server gave a `Retry-After`: wait exactly that, no jitter; if the wait plus the p99 does
 *    not fit the remaining time → `RETRY_AFTER_EXCEEDS_DEADLINE` (fail now instead of sleeping the
 *    deadline away);
 * 4. if the remaining time cannot hold even an immediate attempt of p99 → `DEADLINE_INSUFFICIENT`;
 * 5. connect-phase failure → no delay, another instance; otherwise exponential backoff with full
 *    jitter, shortened so that delay + p99 ≤ remaining;
 * 6. last, the shared budget: `budget.tryConsume()` or `RETRY_BUDGET_EXHAUSTED`. Consuming last
 *    means a refusal for any other reason never spends budget.
 *
 * @throws {@link InvalidOptionError} for counts that are not integers ≥ 0, a negative or NaN
 *   `p99Ms`, or a NaN `remainingMs` (programming errors, not runtime conditions).
 * @example
 * const plan = planRetry({ classification, attemptsMade: 1, maxAttempts: 2, remainingMs: 900, p99Ms: 180, budget });
 * if (plan.retry) await sleep(plan.delayMs); else throw errorFor(plan.code);
 * @see The source article (budget, Retry-After, attempts within the deadline).
 */
export function planRetry(input: PlanRetryInput): RetryPlan {
  const { classification, attemptsMade, maxAttempts, remainingMs, p99Ms, budget } = input;
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0) {
    throw new InvalidOptionError('attemptsMade', 'an integer ≥ 0', attemptsMade);
  }
  if (!Number.isInteger(maxAttempts) || maxAttempts < 0) {
    throw new InvalidOptionError('maxAttempts', 'an integer ≥ 0', maxAttempts);
  }
  if (typeof remainingMs !== 'number' || Number.isNaN(remainingMs)) {
    throw new InvalidOptionError('remainingMs', 'a number of ms', remainingMs);
  }
  if (typeof p99Ms !== 'number' || !Number.isFinite(p99Ms) || p99Ms < 0) {
    throw new InvalidOptionError('p99Ms', 'a finite number of ms ≥ 0', p99Ms);
  }

  if (!classification.retry) {
    return refuse('NOT_RETRYABLE', `The failure is not retryable (${classification.reason}).`);
  }
  if (attemptsMade >= maxAttempts) {
    return refuse(
      'ATTEMPTS_EXHAUSTED',
      `All ${maxAttempts} attempt(s) were made (${classification.reason}).`,
    );
  }

  let delayMs: number;
  const { retryAfterMs } = classification;
  if (retryAfterMs !== undefined) {
    if (retryAfterMs + p99Ms > remainingMs) {
      return refuse(
        'RETRY_AFTER_EXCEEDS_DEADLINE',
        `The server asked to retry after ${retryAfterMs} ms; with a p99 of ${p99Ms} ms that needs ${retryAfterMs + p99Ms} ms, ${describeTimeLeft(remainingMs)}.`,
      );
    }
    delayMs = retryAfterMs;
  } else {
    if (p99Ms > remainingMs) {
      return refuse(
        'DEADLINE_INSUFFICIENT',
        `another attempt needs its p99 of ${p99Ms} ms, ${describeTimeLeft(remainingMs)}.`,
      );
    }
    if (classification.phase === 'connect' || classification.anotherInstance) {
      delayMs = 0;
    } else {
      const jittered = backoffDelayMs({
        retryIndex: Math.max(0, attemptsMade - 1),
        ...(input.backoff?.baseMs === undefined ? {} : { baseMs: input.backoff.baseMs }),
        ...(input.backoff?.capMs === undefined ? {} : { capMs: input.backoff.capMs }),
        ...(input.random === undefined ? {} : { random: input.random }),
      });
      // Waiting is worth nothing if it leaves the attempt too little time: shorten the wait.
      delayMs = Math.max(0, Math.min(jittered, Math.floor(remainingMs - p99Ms)));
    }
  }

  if (!budget.tryConsume()) {
    const { originals, extras } = budget.state();
    return refuse(
      'RETRY_BUDGET_EXHAUSTED',
      `The dependency's retry budget is spent (${extras} extra attempt(s) for ${originals} original(s) in the window).`,
    );
  }
  return { retry: true, delayMs, anotherInstance: classification.anotherInstance };
}

function refuse(code: RetryRefusalCode, reason: string): RetryPlan {
  return { retry: false, code, reason };
}
