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
