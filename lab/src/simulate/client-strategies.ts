import type { Clock } from 'prazo';
import { Deadline } from 'prazo';
import {
  type AttemptOutcome,
  backoffDelayMs,
  calibrateTimeout,
  classify,
  createRetryBudget,
  planRetry,
  type RetryBudget,
} from 'prazo/policy';
import type { SimRandom } from './random.js';

/** The clients compared by the `amplification` scenario. */
export type StrategyName = 'naive' | 'backoff' | 'budget' | 'prazo';

/** Every strategy, in report order. */
export const STRATEGY_NAMES: readonly StrategyName[] = Object.freeze(['naive', 'backoff', 'budget', 'prazo']);

/** One user request as a client strategy sees it. */
export interface SimUserRequest {
  /** Virtual time the user asked, epoch ms. */
  readonly startMs: number;
  /** Attempts sent so far. */
  attemptsMade: number;
  /** The user's deadline, for the strategies that know about deadlines. */
  deadline: Deadline | undefined;
}

/** What a strategy decides after a failed attempt. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; code: string };

/**
 * A client policy, reduced to the decisions the simulator needs. Only the `prazo` and `budget`
 * strategies consult prazo's components; `naive` and `backoff` are the anti-patterns they are
 * compared with.
 */
export interface ClientStrategy {
  readonly name: StrategyName;
  /** Called once per user request, before its first attempt. */
  begin(request: SimUserRequest): void;
  /** Before each attempt: `null` to send it, or the code of the fast failure. */
  precheck(request: SimUserRequest): string | null;
  /** Timeout of the next attempt, ms. */
  attemptTimeoutMs(request: SimUserRequest): number;
  /** After a failed attempt (`request.attemptsMade` already counts it): retry or stop. */
  afterFailure(request: SimUserRequest, outcome: AttemptOutcome): RetryDecision;
  /** The settings the strategy ended up with (for the report). */
  describe(): StrategySettings;
}

/** The settings a strategy runs with, as reported. */
export interface StrategySettings {
  attempts: number;
  attemptTimeoutMs: number;
  backoff: boolean;
  budget: boolean;
  deadline: boolean;
  /** The warning of `calibrateTimeout`, when it reduced the attempts. */
  calibrationWarning: string | null;
}

/** Tunables of the client strategies. */
export interface StrategyOptions {
  /** Attempts per user request (the first one included). */
  attempts: number;
  /** Fixed per-attempt timeout of `naive`, `backoff` and `budget`, ms. */
  fixedTimeoutMs: number;
  /** Base of the jittered exponential backoff of `backoff`, ms. */
  backoffBaseMs: number;
  /** Cap of that backoff, ms. */
  backoffCapMs: number;
  /** Retry budget of `budget` and `prazo`. */
  budgetWindowMs: number;
  budgetMaxRatio: number;
  budgetMinPerSecond: number;
  /** Slack of `calibrateTimeout` for `prazo` (timeout = healthy p99 × slack). */
  slack: number;
}

/** What a strategy is built from. */
export interface StrategyContext {
  /** Virtual clock of the simulation. */
  clock: Clock;
  /** The strategy's own random stream (jitter). */
  random: SimRandom;
  /** The dependency's healthy p99, measured before the run, ms. */
  healthyP99Ms: number;
  /** How long the user waits, ms. */
  userDeadlineMs: number;
}

const READ_TIMEOUT: AttemptOutcome = Object.freeze({
  kind: 'error',
  error: Object.freeze({ code: 'UND_ERR_HEADERS_TIMEOUT' }),
}) as AttemptOutcome;

/** The outcome a client observes when its attempt timed out: undici's headers timeout. */
export const readTimeoutOutcome = (): AttemptOutcome => READ_TIMEOUT;

/**
 * Builds the client strategy `name`.
 *
 * - `naive`: `attempts` attempts, fixed timeout, immediate retry, no budget.
 * - `backoff`: the same with full-jitter exponential backoff between attempts (prazo's backoff).
 * - `budget`: fixed timeout and prazo's retry decision (`planRetry`: classification, backoff and the
 *   shared retry budget), without a deadline.
 * - `prazo`: the budget, plus the user deadline with the pre-call check (remaining < p99 → fail fast),
 *   and the per-attempt timeout from `calibrateTimeout` on the healthy p99.
 */
export function createStrategy(
  name: StrategyName,
  options: StrategyOptions,
  context: StrategyContext,
): ClientStrategy {
  const { clock, random, healthyP99Ms, userDeadlineMs } = context;
  const uniform = random.next;
  const budgeted = name === 'budget' || name === 'prazo';
  const budget: RetryBudget | undefined = budgeted
    ? createRetryBudget({
        windowMs: options.budgetWindowMs,
        maxRatio: options.budgetMaxRatio,
        minPerSecond: options.budgetMinPerSecond,
        clock,
      })
    : undefined;

  if (name === 'prazo') {
    const calibrated = calibrateTimeout(
      { p99Ms: healthyP99Ms, userDeadlineMs, attempts: options.attempts },
      { slack: options.slack },
    );
    return {
      name,
      begin(request) {
        // A request that already has its deadline (it waited for a slot before its call began) keeps it.
        request.deadline ??= Deadline.after(userDeadlineMs, clock);
        budget!.recordOriginal();
      },
      precheck(request) {
        return fitsDeadline(request.deadline!.remainingMs(), healthyP99Ms) ? null : 'DEADLINE_INSUFFICIENT';
      },
      attemptTimeoutMs: (request) => Math.min(calibrated.readMs, request.deadline!.remainingMs()),
      afterFailure(request, outcome) {
        const plan = planRetry({
          classification: classify(outcome, { idempotent: true, nowMs: clock.now() }),
          attemptsMade: request.attemptsMade,
          maxAttempts: calibrated.attempts,
          remainingMs: request.deadline!.remainingMs(),
          p99Ms: healthyP99Ms,
          budget: budget!,
          random: uniform,
          backoff: { baseMs: options.backoffBaseMs, capMs: options.backoffCapMs },
        });
        return plan.retry ? { retry: true, delayMs: plan.delayMs } : { retry: false, code: plan.code };
      },
      describe: () => ({
        attempts: calibrated.attempts,
        attemptTimeoutMs: calibrated.readMs,
        backoff: true,
        budget: true,
        deadline: true,
        calibrationWarning: calibrated.warning?.message ?? null,
      }),
    };
  }

  const settings: StrategySettings = {
    attempts: options.attempts,
    attemptTimeoutMs: options.fixedTimeoutMs,
    backoff: name !== 'naive',
    budget: budgeted,
    deadline: false,
    calibrationWarning: null,
  };
  return {
    name,
    begin() {
      budget?.recordOriginal();
    },
    precheck: () => null,
    attemptTimeoutMs: () => options.fixedTimeoutMs,
    afterFailure(request, outcome) {
      const classification = classify(outcome, { idempotent: true, nowMs: clock.now() });
      if (budget) {
        const plan = planRetry({
          classification,
          attemptsMade: request.attemptsMade,
          maxAttempts: options.attempts,
          // No deadline: this client waits as long as its attempts take.
          remainingMs: Number.POSITIVE_INFINITY,
          p99Ms: healthyP99Ms,
          budget,
          random: uniform,
          backoff: { baseMs: options.backoffBaseMs, capMs: options.backoffCapMs },
        });
        return plan.retry ? { retry: true, delayMs: plan.delayMs } : { retry: false, code: plan.code };
      }
      if (!classification.retry) return { retry: false, code: 'NOT_RETRYABLE' };
      if (request.attemptsMade >= options.attempts) return { retry: false, code: 'ATTEMPTS_EXHAUSTED' };
      if (name === 'naive') return { retry: true, delayMs: 0 };
      return {
        retry: true,
        delayMs: backoffDelayMs({
          retryIndex: request.attemptsMade - 1,
          baseMs: options.backoffBaseMs,
          capMs: options.backoffCapMs,
          random: uniform,
        }),
      };
    },
    describe: () => settings,
  };
}

/**
 * The pre-call check of `callWithDeadline`, on numbers: a call starts only when the time left can hold
 * the dependency's p99 (otherwise it fails fast with `DEADLINE_INSUFFICIENT`, the dependency untouched).
 * The simulator cannot use `callWithDeadline` itself (it is async and arms real abort signals), so
 * the rule is stated here once; `client-strategies.test.ts` checks it against `callWithDeadline`.
 */
export function fitsDeadline(remainingMs: number, p99Ms: number): boolean {
  return remainingMs > 0 && remainingMs >= p99Ms;
}
