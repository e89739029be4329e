import type { HealthySelection } from './healthy.js';

/** The calibrated part of a policy, as produced by `calibrateTimeout`. Durations in ms. */
export interface PolicyUpdate {
  connectMs: number;
  readMs: number;
  attempts: number;
  warning: PolicyWarning | null;
}

/** A calibration warning (`ATTEMPTS_REDUCED`, `DEADLINE_BELOW_ONE_ATTEMPT`). */
export interface PolicyWarning {
  code: string;
  message: string;
  /** Attempts the caller asked for, when the calibration recorded it. */
  requestedAttempts?: number | undefined;
}

/**
 * Which way the configured read timeout has drifted from the healthy p99 × slack:
 * `'timeout-too-tight'` — below it by more than the tolerance (it cuts, or will soon cut, healthy calls;
 * past ratio 1 it is below the p99 itself); `'timeout-too-generous'` — above it by more than the
 * tolerance (a slow dependency holds the caller's slots longer than its tail needs).
 */
export type DriftDirection = 'timeout-too-tight' | 'timeout-too-generous';

/** Payload of the drift monitor's `'drift'` event. Durations in ms. */
export interface DriftEvent {
  dependency: string;
  /** Read timeout in force. */
  configuredMs: number;
  /** p99 of the healthy slices of the live window. */
  measuredP99Ms: number;
  /** `ceil(measuredP99Ms × slack)`: the read timeout a calibration would choose now. */
  recommendedMs: number;
  direction: DriftDirection;
  /** `configuredMs / measuredP99Ms`, the value of `prazo_timeout_p99_ratio`: below 1, healthy calls are cut. */
  ratio: number;
  /** Epoch ms of the check. */
  atMs: number;
}

/** Payload of the drift monitor's `'recalibrated'` event (mode `'auto'`). */
export interface RecalibratedEvent {
  dependency: string;
  previous: PolicyUpdate;
  next: PolicyUpdate;
  measuredP99Ms: number;
  /** Read timeout the healthy p99 asks for, before the step bound and the deadline cap. */
  targetMs: number;
  /** True when the step bound held the change back: more steps will follow. */
  bounded: boolean;
  /** True when the user deadline capped the new read timeout. */
  cappedByDeadline: boolean;
  atMs: number;
}

/** Something that emits the drift monitor's events (`createDriftMonitor()`). */
export interface DriftEventSource {
  on(event: 'drift', listener: (event: DriftEvent) => void): unknown;
  on(event: 'recalibrated', listener: (event: RecalibratedEvent) => void): unknown;
  off(event: 'drift', listener: (event: DriftEvent) => void): unknown;
  off(event: 'recalibrated', listener: (event: RecalibratedEvent) => void): unknown;
}

/** Why a check changed nothing for a dependency. */
export type DriftSkipReason =
  /** The healthy slices hold fewer samples than `minSamples`: the p99 would be noise. */
  | 'too-few-samples'
  /** 'auto' would raise the timeout, but the window has degraded slices: a degraded window never raises it. */
  | 'degraded-window'
  /** 'auto' would raise the timeout, but one attempt at the current timeout already fills the user deadline. */
  | 'deadline-cap'
  /** 'auto' mode needs the user deadline of the dependency and none is known. */
  | 'no-user-deadline';

/** Payload of the drift monitor's `'skipped'` event. */
export interface DriftSkippedEvent {
  dependency: string;
  reason: DriftSkipReason;
  detail: string;
  atMs: number;
}

/** Outcome of {@link assessDrift}. */
export type DriftAssessment =
  | { status: 'insufficient'; samples: number }
  | {
      status: 'ok' | 'drift';
      measuredP99Ms: number;
      recommendedMs: number;
      ratio: number;
      direction: DriftDirection | undefined;
      /** Some slice was excluded for its error rate or its p99 (not merely for having few samples). */
      degraded: boolean;
    };

/**
 * Compares a configured read timeout with healthy p99 × slack. Pure.
 *
 * Drift is `configuredMs` outside `[recommended × (1 − tolerance), recommended × (1 + tolerance)]`.
 * @see The article, "Verification" (a): the configured timeout drifts below the real p99 with no code change.
 */
export function assessDrift(input: {
  configuredMs: number;
  selection: HealthySelection;
  slack: number;
  tolerance: number;
  minSamples: number;
}): DriftAssessment {
  const { configuredMs, selection, slack, tolerance, minSamples } = input;
  const samples = selection.histogram.count;
  if (samples < minSamples) return { status: 'insufficient', samples };
  const measuredP99Ms = selection.histogram.percentile(99);
  const recommendedMs = Math.ceil(measuredP99Ms * slack);
  const direction: DriftDirection | undefined =
    configuredMs < recommendedMs * (1 - tolerance)
      ? 'timeout-too-tight'
      : configuredMs > recommendedMs * (1 + tolerance)
        ? 'timeout-too-generous'
        : undefined;
  return {
    status: direction ? 'drift' : 'ok',
    measuredP99Ms,
    recommendedMs,
    ratio: measuredP99Ms > 0 ? configuredMs / measuredP99Ms : Number.POSITIVE_INFINITY,
    direction,
    degraded: selection.excluded.some((s) => s.reason !== 'too-few-samples'),
  };
}

/** The calibration function {@link planRecalibration} uses (`calibrateTimeout`'s shape). */
export type CalibrateFn = (
  profile: { p99Ms: number; userDeadlineMs: number; attempts?: number },
  options?: { slack?: number; overheadPerAttemptMs?: number },
) => PolicyUpdate;

/** Outcome of {@link planRecalibration}. */
export type RecalibrationPlan =
  | { change: false; reason: DriftSkipReason; detail: string }
  | { change: true; next: PolicyUpdate; targetMs: number; bounded: boolean; cappedByDeadline: boolean };

/**
 * Decides the next policy of a drifted dependency in 'auto' mode. Pure.
 *
 * Guardrails, in order:
 * 1. the target is the healthy p99 × slack; a degraded window (`degraded`) may lower the timeout but never
 *    raise it;
 * 2. one step changes the read timeout by at most `maxStepRatio` (either way);
 * 3. a raise stops where one attempt plus its overhead fills the user deadline;
 * 4. attempts and the warning are recomputed by `calibrate` against the user deadline, from the attempts
 *    originally requested — attempts shrink before the timeout does, and grow back when it falls.
 */
export function planRecalibration(input: {
  current: PolicyUpdate;
  measuredP99Ms: number;
  degraded: boolean;
  slack: number;
  maxStepRatio: number;
  userDeadlineMs: number;
  requestedAttempts: number;
  overheadPerAttemptMs: number;
  calibrate: CalibrateFn;
}): RecalibrationPlan {
  const { current, slack, maxStepRatio, userDeadlineMs, overheadPerAttemptMs } = input;
  const targetMs = Math.ceil(input.measuredP99Ms * slack);
  const raising = targetMs > current.readMs;
  if (raising && input.degraded) {
    return {
      change: false,
      reason: 'degraded-window',
      detail: `healthy p99 asks for ${targetMs} ms but the window has degraded slices; the timeout stays at ${current.readMs} ms`,
    };
  }
  let nextMs = raising
    ? Math.min(targetMs, Math.floor(current.readMs * maxStepRatio))
    : Math.max(targetMs, Math.ceil(current.readMs / maxStepRatio));
  const bounded = nextMs !== targetMs;
  let cappedByDeadline = false;
  const deadlineCapMs = Math.floor(userDeadlineMs - overheadPerAttemptMs);
  if (raising && nextMs > deadlineCapMs) {
    if (deadlineCapMs <= current.readMs) {
      return {
        change: false,
        reason: 'deadline-cap',
        detail: `healthy p99 asks for ${targetMs} ms but one attempt of ${current.readMs} ms + ${overheadPerAttemptMs} ms overhead already fills the ${userDeadlineMs} ms deadline`,
      };
    }
    nextMs = deadlineCapMs;
    cappedByDeadline = true;
  }
  // calibrate rounds p99 × slack up, so hand it the p99 that yields nextMs (within float error).
  const next = input.calibrate(
    { p99Ms: nextMs / slack, userDeadlineMs, attempts: input.requestedAttempts },
    { slack, overheadPerAttemptMs },
  );
  return { change: true, next, targetMs, bounded, cappedByDeadline };
}
