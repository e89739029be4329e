/**
 * `prazo/policy`: the pure policies under the client — calibration, the retry budget,
 * classification, `Retry-After`, backoff, the retry plan, hedging, idempotency, Little's law, and the
 * client's overload limits (adaptive throttling, the gradient concurrency limit and the gate that
 * queues calls for it). No timers, no sockets: state in, decision out, time from an injected clock.
 *
 * @packageDocumentation
 */
export type {
  AdaptiveThrottle,
  AdaptiveThrottleOptions,
  AdaptiveThrottleState,
} from './adaptive-throttle.js';
export { ADAPTIVE_THROTTLE_DEFAULTS, acceptedStatus, createAdaptiveThrottle } from './adaptive-throttle.js';
export type { BackoffInput } from './backoff.js';
export { BACKOFF_DEFAULTS, backoffDelayMs } from './backoff.js';
export type {
  CalibratedPolicy,
  CalibrationOptions,
  CalibrationProfile,
  CalibrationWarning,
  CalibrationWarningCode,
} from './calibrate.js';
export { CALIBRATION_DEFAULTS, calibrateTimeout, readTimeoutMs, SLACK_RANGE } from './calibrate.js';
export type { AttemptOutcome, AttemptPhase, Classification, ClassifyContext } from './classify.js';
export { classify, RETRYABLE_STATUSES } from './classify.js';
export type {
  ConcurrencyGate,
  ConcurrencyOptions,
  ConcurrencySnapshot,
  GateWaiter,
} from './concurrency-gate.js';
export { createConcurrencyGate } from './concurrency-gate.js';
export type {
  GradientLimit,
  GradientLimitOptions,
  GradientLimitState,
  ProbeCounts,
} from './gradient-limit.js';
export { createGradientLimit, GRADIENT_LIMIT_DEFAULTS } from './gradient-limit.js';
export type { HeaderRecord } from './header-value.js';
export type { HedgePolicy } from './hedge-delay.js';
export { hedgeDelayMs, shouldHedge } from './hedge-delay.js';
export {
  hasIdempotencyKey,
  IDEMPOTENT_METHODS,
  isHedgeSafe,
  isIdempotent,
  SAFE_METHODS,
} from './idempotency.js';
export type { PoolAnalysis, PoolAnalysisInput, PoolProfile, TimeoutHeadroom } from './littles-law.js';
export {
  analysePool,
  maxHoldTimeMs,
  maxTolerableTimeoutMs,
  slotsNeeded,
  timeoutHeadroom,
  timeToExhaustMs,
} from './littles-law.js';
export type { PlanRetryInput, RetryPlan, RetryRefusalCode } from './plan-retry.js';
export { planRetry } from './plan-retry.js';
export type { RetryAfterReading } from './retry-after.js';
export { parseRetryAfter, RETRY_AFTER_MAX_MS, readRetryAfter } from './retry-after.js';
export type { RetryBudget, RetryBudgetOptions, RetryBudgetState } from './retry-budget.js';
export { createRetryBudget, RETRY_BUDGET_DEFAULTS } from './retry-budget.js';
