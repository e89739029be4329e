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
export type { CsvParserOptions } from './latency/formats/csv.js';
export { createCsvParser } from './latency/formats/csv.js';
export { detectFormat } from './latency/formats/detect.js';
export { parseHistogramJson } from './latency/formats/histogram-json.js';
export { createLinesParser } from './latency/formats/lines.js';
export type { PrometheusParserOptions } from './latency/formats/prometheus.js';
export { createPrometheusParser } from './latency/formats/prometheus.js';
export type { LatencyFileReport, ReadLatencyFileOptions } from './latency/formats/read-latency-file.js';
export { READ_LATENCY_FILE_DEFAULTS, readLatencyFile } from './latency/formats/read-latency-file.js';
export type { LatencyFormat, LineParser, ParsedLatency } from './latency/formats/types.js';
export { LATENCY_FORMATS } from './latency/formats/types.js';
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
  CalibratedPolicy,
  CalibrationOptions,
  CalibrationProfile,
  CalibrationWarning,
  CalibrationWarningCode,
} from './policy/calibrate.js';
export {
  CALIBRATION_DEFAULTS,
  calibrateTimeout,
  MAX_DURATION_MS,
  normalizeCalibrationOptions,
  readTimeoutMs,
  SLACK_RANGE,
} from './policy/calibrate.js';
export type { PoolAnalysis, PoolAnalysisInput, PoolProfile, TimeoutHeadroom } from './policy/littles-law.js';
export {
  analysePool,
  maxHoldTimeMs,
  maxTolerableTimeoutMs,
  slotsNeeded,
  timeoutHeadroom,
  timeToExhaustMs,
} from './policy/littles-law.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
