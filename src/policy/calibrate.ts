import { integerIn, numberIn, objectOption } from '../option-checks.js';

/**
 * What prazo knows about a dependency and its caller when it derives a timeout policy.
 *
 * @see The source article, "Timeouts from the histogram, not the mean" (DESIGN.md §1–3).
 */
export interface CalibrationProfile {
  /** Healthy end-to-end p99 latency of one call, in milliseconds. Must be measured on a healthy window. */
  p99Ms: number;
  /** How long the caller (ultimately the user) waits for the whole operation, in milliseconds. */
  userDeadlineMs: number;
  /**
   * Attempts wanted (the first call plus retries), an integer ≥ 1.
   * @default 2
   */
  attempts?: number;
  /**
   * Healthy p99 of the connect phase alone, in milliseconds. When given, the connect timeout is derived
   * from it instead of from {@link CalibrationProfile.p99Ms}.
   */
  connectP99Ms?: number;
}

/** Tuning of {@link calibrateTimeout}. Every field has a default in {@link CALIBRATION_DEFAULTS}. */
export interface CalibrationOptions {
  /**
   * Factor applied to the healthy p99 to absorb load variation between measurement and incident.
   * The article advises 1.3–1.5; prazo accepts values above 1 and up to 3 (a larger factor lets a slow
   * call hold its slot for longer than the tail ever reaches, which protects nothing).
   * @default 1.4
   */
  slack?: number;
  /**
   * Upper bound of the connect timeout, in milliseconds. A connect that takes longer means the instance
   * is down: fail fast and try another one.
   * @default 400
   */
  connectCapMs?: number;
  /**
   * Time reserved per attempt for network round trip, serialisation and scheduling, in milliseconds.
   * @default 30
   */
  overheadPerAttemptMs?: number;
}

/** Why the calibrated policy differs from what was asked. Match on `code`. */
export type CalibrationWarningCode =
  | 'ATTEMPTS_REDUCED'
  | 'DEADLINE_BELOW_ONE_ATTEMPT'
  | 'READ_TIMEOUT_CLAMPED'
  | 'CONNECT_TIMEOUT_CLAMPED';

/** An explicit statement that the policy is not exactly what the profile asked for. */
export interface CalibrationWarning {
  /**
   * `ATTEMPTS_REDUCED`: fewer attempts than requested fit the deadline (at least one does).
   * `DEADLINE_BELOW_ONE_ATTEMPT`: not even one attempt plus its overhead fits; the policy keeps one
   * attempt with the calibrated timeout, which can outlast the deadline — the deadline (or the p99) must
   * change, not the timeout.
   * `READ_TIMEOUT_CLAMPED`: p99 × slack is above {@link MAX_DURATION_MS} (2^31−1 ms, the longest delay
   * Node's timers accept); the read timeout is held there.
   * `CONNECT_TIMEOUT_CLAMPED`: the connect timeout derived from the connect p99 was longer than the read
   * timeout (which bounds the whole attempt, connect included); it is held to the read timeout.
   */
  code: CalibrationWarningCode;
  /** The warning in plain words, with the numbers. */
  message: string;
  /** Attempts the profile asked for. */
  requestedAttempts: number;
  /** Attempts that fit the deadline: `floor(deadline / (read + overhead))`, possibly 0. */
  fittingAttempts: number;
}

/** The per-attempt policy derived by {@link calibrateTimeout}. All durations in milliseconds. */
export interface CalibratedPolicy {
  /** Connect-phase timeout of one attempt. */
  connectMs: number;
  /** Timeout of one whole attempt (connect + request + response), never below p99 × slack. */
  readMs: number;
  /** Attempts to make, ≥ 1. */
  attempts: number;
  /** The first of {@link CalibratedPolicy.warnings} (attempts warnings come first), or `null` when there is none. */
  warning: CalibrationWarning | null;
  /**
   * Every warning, in order: the attempts warning (`ATTEMPTS_REDUCED`, `DEADLINE_BELOW_ONE_ATTEMPT`),
   * then the clamps (`READ_TIMEOUT_CLAMPED`, `CONNECT_TIMEOUT_CLAMPED`). Empty when the policy is what
   * was asked. Always set by {@link calibrateTimeout}; optional for policies built by hand.
   */
  warnings?: readonly CalibrationWarning[];
}

/** Defaults of {@link CalibrationOptions} and of {@link CalibrationProfile.attempts}. */
export const CALIBRATION_DEFAULTS: Readonly<Required<CalibrationOptions> & { attempts: number }> =
  Object.freeze({
    slack: 1.4,
    connectCapMs: 400,
    overheadPerAttemptMs: 30,
    attempts: 2,
  });

/** Smallest and largest slack {@link calibrateTimeout} accepts (exclusive, inclusive). */
export const SLACK_RANGE: Readonly<{ above: number; atMost: number }> = Object.freeze({
  above: 1,
  atMost: 3,
});

/**
 * Largest duration accepted, in milliseconds: Node's timers cannot be armed for longer (about 24.8 days).
 */
export const MAX_DURATION_MS = 2_147_483_647;

/**
 * Per-attempt timeout for a healthy p99 and a slack: `ceil(p99Ms × slack)`, in milliseconds, held to
 * {@link MAX_DURATION_MS}. The one formula shared by {@link calibrateTimeout} and the pool arithmetic.
 *
 * @throws {InvalidOptionError} when `p99Ms` or `slack` is out of range.
 * @example readTimeoutMs(180, 1.4) // 252
 */
export function readTimeoutMs(p99Ms: number, slack: number = CALIBRATION_DEFAULTS.slack): number {
  checkDuration('p99Ms', p99Ms);
  checkSlack(slack);
  return Math.min(MAX_DURATION_MS, ceilMs(p99Ms * slack));
}

/**
 * Derives connect and read timeouts from the healthy p99 and fits the number of attempts into the
 * caller's deadline.
 *
 * - read = `ceil(p99Ms × slack)`, held to {@link MAX_DURATION_MS} (warning `READ_TIMEOUT_CLAMPED`);
 * - connect = `min(connectCapMs, read)`, or `min(connectCapMs, ceil(connectP99Ms × slack))` when the
 *   connect-phase p99 is known — never above read (warning `CONNECT_TIMEOUT_CLAMPED`): the read
 *   timeout bounds the whole attempt, connect included;
 * - `overheadPerAttemptMs` is reserved per attempt: the requested attempts fit when
 *   `attempts × (read + overhead) ≤ userDeadlineMs`;
 * - when they do not fit, **attempts are reduced, never the timeout** (a shorter timeout cuts healthy
 *   traffic, which then retries and adds load), and the warning `ATTEMPTS_REDUCED` says so;
 * - when not even one attempt fits, the warning is `DEADLINE_BELOW_ONE_ATTEMPT` and one attempt is kept.
 *   The article's sketch returns that single attempt silently; prazo makes it a distinct warning.
 * - `warning` is the first of `warnings`, which lists them all.
 *
 * Pure: no clock, no I/O.
 *
 * @throws {InvalidOptionError} naming the option when a value is not a finite positive number, when
 *   `attempts` is not an integer ≥ 1, or when `slack` is not in (1, 3].
 * @example
 * calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, attempts: 2 })
 * // → { connectMs: 252, readMs: 252, attempts: 2, warning: null }
 * calibrateTimeout({ p99Ms: 180, userDeadlineMs: 600, attempts: 3 })
 * // → { connectMs: 252, readMs: 252, attempts: 2, warning: { code: 'ATTEMPTS_REDUCED', … } }
 * @see DESIGN.md "What the article asks for" §1–3 and the article's `calibrarTimeout` sketch.
 */
export function calibrateTimeout(
  profile: CalibrationProfile,
  options?: CalibrationOptions,
): CalibratedPolicy {
  const { slack, connectCapMs, overheadPerAttemptMs } = normalizeCalibrationOptions(options);
  objectOption('profile', profile, 'an object with p99Ms and userDeadlineMs');
  const { p99Ms, userDeadlineMs, connectP99Ms } = profile;
  const requested = profile.attempts ?? CALIBRATION_DEFAULTS.attempts;
  checkDuration('p99Ms', p99Ms);
  checkDuration('userDeadlineMs', userDeadlineMs);
  integerIn('attempts', requested, 1, 100);
  if (connectP99Ms !== undefined) checkDuration('connectP99Ms', connectP99Ms);

  const clamps: CalibrationWarning[] = [];
  const wantedReadMs = ceilMs(p99Ms * slack);
  const readMs = Math.min(wantedReadMs, MAX_DURATION_MS);
  const wantedConnectMs = Math.min(
    connectCapMs,
    connectP99Ms === undefined ? readMs : ceilMs(connectP99Ms * slack),
  );
  const connectMs = Math.min(wantedConnectMs, readMs);
  const perAttemptMs = readMs + overheadPerAttemptMs;
  const fitting = Math.floor(userDeadlineMs / perAttemptMs);
  if (readMs < wantedReadMs)
    clamps.push(
      clamp(
        'READ_TIMEOUT_CLAMPED',
        `p99 ${fmt(p99Ms)} ms × slack ${slack} = ${wantedReadMs} ms is longer than Node's timers can wait; the read timeout is held to ${MAX_DURATION_MS} ms.`,
        requested,
        fitting,
      ),
    );
  if (connectMs < wantedConnectMs)
    clamps.push(
      clamp(
        'CONNECT_TIMEOUT_CLAMPED',
        `The connect timeout (${wantedConnectMs} ms from connect p99 ${fmt(connectP99Ms ?? p99Ms)} ms × slack ${slack}) is longer than the read timeout of ${readMs} ms, which bounds the whole attempt; it is held to ${readMs} ms. Check the connect p99: it should be well below the end-to-end p99.`,
        requested,
        fitting,
      ),
    );

  if (fitting >= requested)
    return { connectMs, readMs, attempts: requested, warning: clamps[0] ?? null, warnings: clamps };
  if (fitting >= 1) {
    const reduced: CalibrationWarning = {
      code: 'ATTEMPTS_REDUCED',
      message:
        `A ${fmt(userDeadlineMs)} ms deadline fits ${fitting} attempt${fitting === 1 ? '' : 's'} of ` +
        `${readMs} ms + ${fmt(overheadPerAttemptMs)} ms overhead, not ${requested}: attempts were reduced, ` +
        'the timeout was not shortened.',
      requestedAttempts: requested,
      fittingAttempts: fitting,
    };
    return { connectMs, readMs, attempts: fitting, warning: reduced, warnings: [reduced, ...clamps] };
  }
  const belowOne: CalibrationWarning = {
    code: 'DEADLINE_BELOW_ONE_ATTEMPT',
    message:
      `A ${fmt(userDeadlineMs)} ms deadline cannot hold even one attempt of ${readMs} ms + ` +
      `${fmt(overheadPerAttemptMs)} ms overhead (p99 ${fmt(p99Ms)} ms × slack ${slack}). One attempt is ` +
      'kept and may outlast the deadline: raise the deadline or make the dependency faster; shrinking ' +
      'the timeout would cut healthy calls.',
    requestedAttempts: requested,
    fittingAttempts: 0,
  };
  return { connectMs, readMs, attempts: 1, warning: belowOne, warnings: [belowOne, ...clamps] };
}

function clamp(
  code: CalibrationWarningCode,
  message: string,
  requestedAttempts: number,
  fittingAttempts: number,
): CalibrationWarning {
  return { code, message, requestedAttempts, fittingAttempts };
}

/**
 * Merges `options` with {@link CALIBRATION_DEFAULTS} and validates them.
 *
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeCalibrationOptions(options?: CalibrationOptions): Required<CalibrationOptions> {
  if (options !== undefined) objectOption('options', options);
  const slack = options?.slack ?? CALIBRATION_DEFAULTS.slack;
  const connectCapMs = options?.connectCapMs ?? CALIBRATION_DEFAULTS.connectCapMs;
  const overheadPerAttemptMs = options?.overheadPerAttemptMs ?? CALIBRATION_DEFAULTS.overheadPerAttemptMs;
  checkSlack(slack);
  checkDuration('connectCapMs', connectCapMs);
  numberIn(
    'overheadPerAttemptMs',
    overheadPerAttemptMs,
    { min: 0, max: MAX_DURATION_MS },
    `a finite number from 0 to ${MAX_DURATION_MS}`,
  );
  return { slack, connectCapMs, overheadPerAttemptMs };
}

function checkDuration(option: string, value: unknown): asserts value is number {
  numberIn(
    option,
    value,
    { above: 0, max: MAX_DURATION_MS },
    `a finite number of milliseconds > 0 and ≤ ${MAX_DURATION_MS}`,
  );
}

function checkSlack(value: unknown): asserts value is number {
  numberIn(
    'slack',
    value,
    { above: SLACK_RANGE.above, max: SLACK_RANGE.atMost },
    `a number > ${SLACK_RANGE.above} and ≤ ${SLACK_RANGE.atMost} (advice: 1.3–1.5)`,
  );
}

/** Rounds up to a whole millisecond: a timeout is never below the product it comes from. */
function ceilMs(value: number): number {
  return Math.ceil(value);
}

function fmt(ms: number): string {
  return Number.isInteger(ms) ? String(ms) : String(Math.round(ms * 100) / 100);
}
