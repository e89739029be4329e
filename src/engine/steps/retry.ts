import {
  ConnectTimeoutError,
  isPrazoError,
  ReadTimeoutError,
  RequestFailedError,
  RetryAfterExceedsDeadlineError,
  RetryBudgetExhaustedError,
} from '../../errors.js';
import { classify, type ErrorVerdict, judgeError, judgeStatus } from '../../policy/classify.js';
import { planRetry } from '../../policy/plan-retry.js';
import type { RetryBudget } from '../../policy/retry-budget.js';
import type { Call, DependencyResponse } from '../call.js';
import { closedError, withHistory } from '../history.js';
import {
  type DependencyContext,
  failLater,
  type Handler,
  type Outcome,
  outcomeOf,
  retryLeaves,
  settleWith,
} from '../pipeline.js';
import { discard } from '../response.js';
import { Attempt, type TryHandler } from './attempt.js';
import { mayRequeue } from './requeue.js';
import { sleep } from './sleep.js';

/**
 * The attempt loop (the pre-call check before the first try is the admission step's). After a
 * failed try, its classification then `planRetry` decide: retry only with attempts left,
 * the budget granting an extra, and the server's `Retry-After` (or the backoff) plus a p99 fitting
 * the deadline. The next try prefers another instance (the balancer's `pickRetry`).
 *
 * Before any of that, an attempt that was never written (connect phase: refused, connect timeout,
 * aborted while waiting for a pool connection) is **requeued** when `mayRequeue` and the requeue
 * budget allow: sent at once to another instance without counting as one of the caller's tries and
 * without spending the retry budget. A request that may have reached the server never is.
 *
 * What the caller gets at the end: a status below 400 or a final status (404, 422 …) is returned;
 * a retryable status with no retry left (a 503) is returned too, as the response it is; a
 * `Retry-After` that does not fit the deadline throws `RETRY_AFTER_EXCEEDS_DEADLINE`; an error is
 * thrown as a prazo error with the history of attempts and the last cause.
 *
 * Each try gets a fresh {@link Attempt}, its first copy, handed down to the try's steps (its kind:
 * `original`, then `retry`); once the try has settled, it says which attempt was sent last (the
 * origin an error names) and how the attempt step judged the error the try failed with
 * (`verdictOf`): an error is classified once, by the attempt step; an answer (a status of 400 or
 * above) here.
 */
export function retryStep(ctx: DependencyContext): (next: TryHandler) => Handler {
  return (next) => (call, nowMs, out) => firstTry(ctx, call, next, nowMs, out);
}

/**
 * The call's first try. On the usual path the first try answers and the call is done: the try's
 * outcome ({@link FirstTry}) hands the answer up as it is; a try that did not answer below 400 goes
 * on in {@link retryLoop}.
 */
function firstTry(ctx: DependencyContext, call: Call, next: TryHandler, nowMs: number, out: Outcome): void {
  const tryFirst = Attempt.forTry(ctx, call, 'original', 1, nowMs);
  // While the try runs, it is what a cancellation interrupts (its first copy aborts every copy).
  call.waitOn(tryFirst);
  const settled = new FirstTry(ctx, call, next, tryFirst, out);
  try {
    next(call, tryFirst, nowMs, settled);
  } catch (error) {
    failLater(settled, error);
  }
}

/** The outcome of a call's first try: the answer goes up, anything else to the retry loop. */
class FirstTry implements Outcome {
  readonly #ctx: DependencyContext;
  readonly #call: Call;
  readonly #next: TryHandler;
  readonly #tryFirst: Attempt;
  readonly #out: Outcome;

  constructor(ctx: DependencyContext, call: Call, next: TryHandler, tryFirst: Attempt, out: Outcome) {
    this.#ctx = ctx;
    this.#call = call;
    this.#next = next;
    this.#tryFirst = tryFirst;
    this.#out = out;
  }

  answered(response: DependencyResponse): void {
    this.#call.stopWaiting(this.#tryFirst);
    if (judgeStatus(response.status).kind === 'success') this.#out.answered(response);
    else this.#retry(response, undefined);
  }

  failed(error: unknown): void {
    this.#retry(undefined, error);
  }

  #retry(response: DependencyResponse | undefined, error: unknown): void {
    settleWith(retryLoop(this.#ctx, this.#call, this.#next, this.#tryFirst, response, error), this.#out);
  }
}

/**
 * What follows a try that settled with `response` (not below 400) or `error`: the tries after the
 * first, until one answers, the call runs out of attempts, or a rule ends it.
 */
async function retryLoop(
  ctx: DependencyContext,
  call: Call,
  next: TryHandler,
  settled: Attempt,
  settledResponse: DependencyResponse | undefined,
  settledError: unknown,
): Promise<DependencyResponse> {
  let tryFirst = settled;
  let response = settledResponse;
  let error = settledError;
  call.stopWaiting(tryFirst);
  /** The call's attempt started last (kept across tries: a try may fail before sending one). */
  let last: Attempt | null = null;
  // The retry's own counts, local to this loop: tries made (a requeue is not one), requeues made,
  // and a retry the attempt step already took from the budget (kept until a retry spends it).
  let tries = 1;
  let requeues = 0;
  let reserved = false;
  for (let again = false; ; again = true) {
    if (again) {
      const nowMs = ctx.clock.now();
      tryFirst = Attempt.forTry(ctx, call, 'retry', tries, nowMs);
      // A retry still reserved (the cut attempt was requeued, not retried) stays the try's: its own
      // cut takes no second one from the budget.
      tryFirst.retryReserved = reserved;
      call.waitOn(tryFirst);
      response = undefined;
      error = undefined;
      const first = tryFirst;
      try {
        response = await outcomeOf((settled) => next(call, first, nowMs, settled));
      } catch (caught) {
        error = caught;
      }
      call.stopWaiting(tryFirst);
      if (response !== undefined && judgeStatus(response.status).kind === 'success') return response;
    }
    if (tryFirst.lastSent !== null) last = tryFirst.lastSent;
    if (tryFirst.retryReserved) reserved = true;
    // A retry sent beside the try's attempt at its read timeout made the try two of the call's tries.
    if (tryFirst.tryNumber > tries) tries = tryFirst.tryNumber;
    if (call.cancelled !== null) {
      if (response !== undefined) discard(response);
      throw withHistory(call.cancelled, call, ctx.name);
    }
    const now = ctx.clock.now();
    // What is left of the call's time as the retry is decided: every rule below reads this one figure.
    const remainingMs = call.limitMs - now;
    const verdict =
      response === undefined ? errorVerdict(call, tryFirst, error, now) : answerVerdict(call, response, now);
    const classification = verdict.classification;
    if (
      response === undefined &&
      classification.retry &&
      mayRequeue(
        ctx.requeue,
        classification.phase === 'connect',
        call.replayable,
        requeues,
        ctx.balancer.size,
        remainingMs,
        ctx.live.p99Ms,
      ) &&
      ctx.requeueBudget.tryConsume()
    ) {
      requeues++;
      if (ctx.events.has('requeue')) {
        ctx.events.emit('requeue', {
          dependency: ctx.name,
          requestId: call.id,
          attempt: call.attemptCount,
          instance: last === null ? '' : last.origin,
          reason: classification.reason,
          requeues,
        });
      }
      if (ctx.closed) throw withHistory(closedError(ctx.name), call, ctx.name);
      continue;
    }
    if (!classification.retry) {
      if (response !== undefined) return response;
      throw finalError(ctx, call, last, error, verdict, explain(classification.reason));
    }
    // The dependency is still working on what this client gave up on, beyond the concurrency limit
    // (`ConcurrencyGate.abandon`): a retry would only queue behind that work — unless that work is
    // on the instance the retry leaves for another.
    const failedOn = call.failedOn;
    const leaves = failedOn === null ? -1 : retryLeaves(ctx, call, failedOn[failedOn.length - 1]!);
    if (ctx.concurrency?.pastLimitWithAbandoned(0, leaves)) {
      if (response !== undefined) return response;
      throw finalError(ctx, call, last, error, verdict, 'the dependency is past its concurrency limit.');
    }
    // A retry the attempt step reserved when it cut the attempt (lastAttempt 'deadline') is spent.
    const spent = reserved;
    reserved = false;
    const plan = planRetry({
      classification,
      attemptsMade: tries,
      maxAttempts: ctx.policy.attempts,
      remainingMs,
      p99Ms: ctx.live.p99Ms,
      budget: spent ? reservedBudget(ctx.budget) : ctx.budget,
      random: ctx.random,
    });
    if (!plan.retry) {
      const events = ctx.events;
      if (plan.code === 'RETRY_BUDGET_EXHAUSTED' && events.has('budget-exhausted'))
        events.emit('budget-exhausted', { dependency: ctx.name, requestId: call.id, purpose: 'retry' });
      if (plan.code === 'DEADLINE_INSUFFICIENT' && events.has('fast-fail'))
        events.emit('fast-fail', {
          dependency: ctx.name,
          requestId: call.id,
          remainingMs,
          requiredMs: ctx.live.p99Ms,
          beforeAttempt: false,
        });
      if (plan.code === 'RETRY_AFTER_EXCEEDS_DEADLINE') {
        if (response !== undefined) discard(response);
        const err = new RetryAfterExceedsDeadlineError({
          retryAfterMs: classification.retryAfterMs ?? 0,
          remainingMs,
          p99Ms: ctx.live.p99Ms,
          cause: finalError(ctx, call, last, error ?? answered(response), verdict, ''),
        });
        throw withHistory(err, call, ctx.name);
      }
      if (response !== undefined) return response;
      const failure = finalError(ctx, call, last, error, verdict, plan.reason);
      if (plan.code === 'RETRY_BUDGET_EXHAUSTED')
        throw withHistory(
          new RetryBudgetExhaustedError({ cause: failure, dependency: ctx.name }),
          call,
          ctx.name,
        );
      throw failure;
    }
    tries++;
    if (response !== undefined) discard(response);
    if (ctx.events.has('retry'))
      ctx.events.emit('retry', {
        dependency: ctx.name,
        requestId: call.id,
        attempt: call.attemptCount,
        delayMs: plan.delayMs,
        reason: classification.reason,
        anotherInstance: plan.anotherInstance,
      });
    if (plan.delayMs > 0) {
      const from = ctx.clock.now();
      await sleep(ctx, call, plan.delayMs);
      call.ledger.waited(
        classification.retryAfterMs === undefined ? 'backoff' : 'retry-after',
        from,
        ctx.clock.now(),
      );
    }
    if (call.cancelled !== null) throw withHistory(call.cancelled, call, ctx.name);
    if (ctx.closed) throw withHistory(closedError(ctx.name), call, ctx.name);
  }
}

/**
 * The verdict on the error a try failed with: the attempt step's, left on the try's first copy. An error
 * no attempt step judged (a step below this one that failed on its own) is judged here.
 */
function errorVerdict(call: Call, tryFirst: Attempt, error: unknown, nowMs: number): ErrorVerdict {
  return tryFirst.verdictOf(error) ?? judgeError(error, call.classifyContext(nowMs));
}

/** The verdict on an answer of 400 or above (the attempt step classifies no answer). */
function answerVerdict(call: Call, response: DependencyResponse, nowMs: number): ErrorVerdict {
  const classification = classify(
    { kind: 'response', status: response.status, headers: response.headers },
    call.classifyContext(nowMs),
  );
  return { classification, code: undefined, timeout: undefined };
}

/** The answer a retry was refused after, as an error (the `cause` of `RETRY_AFTER_EXCEEDS_DEADLINE`). */
function answered(response: DependencyResponse | undefined): Error {
  const retryAfter = response?.headers['retry-after'];
  return new Error(
    `The server answered ${response?.status ?? 'nothing'}${retryAfter === undefined ? '' : ` with Retry-After: ${String(retryAfter)}`}.`,
  );
}

/** The prazo error that ends a call whose last try failed with `error`. */
function finalError(
  ctx: DependencyContext,
  call: Call,
  last: Attempt | null,
  error: unknown,
  verdict: ErrorVerdict,
  why: string,
): Error {
  let result: Error;
  const { classification, code, timeout } = verdict;
  const origin = last === null ? ctx.name : last.origin;
  if (isPrazoError(error)) {
    result = error;
  } else if (timeout === 'connect') {
    // The timeout the transport enforces; a transport over another's connections (the interceptor's)
    // enforces none of its own.
    const connectMs = ctx.transport.connectTimeoutMs;
    result =
      connectMs === undefined
        ? new ConnectTimeoutError(`Could not connect to ${origin} within the dispatcher's connect timeout.`, {
            cause: error,
          })
        : new ConnectTimeoutError(`Could not connect to ${origin} within ${connectMs} ms.`, {
            cause: error,
            timeoutMs: connectMs,
          });
  } else if (timeout === 'read') {
    result = new ReadTimeoutError(`No answer from ${origin} within the read timeout.`, { cause: error });
  } else {
    const phase = classification.phase === 'connect' ? 'connect' : 'read';
    result = new RequestFailedError(
      `${ctx.name}: ${phase === 'connect' ? 'could not reach' : 'request failed on'} ${origin} (${classification.reason}${code === undefined ? '' : `, ${code}`}).`,
      { cause: error, phase },
    );
  }
  if (!isPrazoError(result, 'CANCELLED') && !isPrazoError(result, 'DEADLINE_EXCEEDED') && why !== '')
    result.message += ` Not retried: ${why}`;
  return withHistory(result, call, ctx.name);
}

const EXPLANATIONS: Readonly<Record<string, string>> = {
  'stream-body': 'the body is a stream, sent once and never replayed.',
  'not-idempotent': 'the request is not idempotent and may have reached the server.',
  'unknown-error': 'the error is not known to be safe to retry.',
};

function explain(reason: string): string {
  return EXPLANATIONS[reason] ?? `${reason}.`;
}

/** The budget as seen by a retry it already granted (`Attempt.retryReserved`): it grants it again. */
function reservedBudget(budget: RetryBudget): RetryBudget {
  return {
    recordOriginal: (nowMs) => budget.recordOriginal(nowMs),
    tryConsume: () => true,
    state: () => budget.state(),
  };
}
