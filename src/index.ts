/**
 * prazo — deadline-aware HTTP calls for Node.js.
 *
 * @packageDocumentation
 */
export type { Clock, Timer } from './clock.js';
export { systemClock } from './clock.js';
export type { PrazoErrorCode } from './errors.js';
export {
  CancelledError,
  DeadlineExceededError,
  DeadlineInsufficientError,
  InvalidInputError,
  InvalidOptionError,
  isPrazoError,
  PrazoError,
} from './errors.js';
export type {
  ExclusionReason,
  HealthRule,
  HealthySelection,
  SliceStats,
  SliceSummary,
} from './latency/healthy.js';
export { HEALTH_RULE_DEFAULTS, normalizeHealthRule, selectHealthy } from './latency/healthy.js';
export type { HistogramJson } from './latency/histogram.js';
export { LatencyHistogram } from './latency/histogram.js';
export type { SlicedWindow, SlicedWindowOptions } from './latency/sliced-window.js';
export { createSlicedWindow, SLICED_WINDOW_DEFAULTS } from './latency/sliced-window.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
