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
export type {
  CalibrateFn,
  DriftAssessment,
  DriftDirection,
  DriftEvent,
  DriftEventSource,
  DriftSkippedEvent,
  DriftSkipReason,
  RecalibratedEvent,
  RecalibrationPlan,
} from './observe/drift-check.js';
export { assessDrift, planRecalibration } from './observe/drift-check.js';
export type {
  DriftCheckResult,
  DriftMode,
  DriftMonitor,
  DriftMonitorEventMap,
  DriftMonitorOptions,
} from './observe/drift-monitor.js';
export {
  createDriftMonitor,
  DRIFT_MONITOR_DEFAULTS,
  normalizeDriftMonitorOptions,
} from './observe/drift-monitor.js';
export type { MetricDefinition, MetricKey, MetricLabel, MetricType } from './observe/metric-names.js';
export {
  DURATION_BUCKETS_SECONDS,
  LABEL_VALUES,
  METRICS,
  OTEL_ATTRIBUTES,
  PROMETHEUS_PREFIX,
  prometheusName,
  prometheusSeriesNames,
} from './observe/metric-names.js';
export type {
  InstrumentableDependency,
  InstrumentTarget,
  RecalibratableDependency,
} from './observe/source.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
