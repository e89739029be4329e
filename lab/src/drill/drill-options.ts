import { InvalidOptionError } from 'prazo';

/** Lengths of the drill's phases, in ms. */
export interface PhaseLengths {
  /** Healthy traffic; the prazo policy is calibrated from what it measures. */
  warmupMs: number;
  /**
   * A healthy fleet whose capacity drops for `triggerDropMs` (service time × `triggerFactor`), then
   * comes back: does the load the clients add outlive the trigger? Ends with the supplier restarted for a configuration whose supplier still queues.
   */
  triggerMs: number;
  /** Of the three supplier instances, one answers 503 (sick), one is slower, one is healthy. */
  fleetMs: number;
  /** The supplier answers at the naive timeout (30 s): effectively hung. */
  degradeMs: number;
  /** The supplier answers a share of 503s. */
  burstMs: number;
  /** One supplier instance is slow on a share of its requests (tail latency). */
  tailMs: number;
  /** Healthy again. */
  recoveryMs: number;
}

/** Options of the drill (`prazo drill`). Durations in ms. */
export interface DrillOptions {
  /** Shorter phases (38 s in all) instead of the default 102 s. @default false */
  quick?: boolean;
  /** Phase lengths; those given override the (quick or default) lengths. */
  phases?: Partial<PhaseLengths>;
  /** Offered load per configuration, requests per second, split between the two routes. @default 100 */
  rps?: number;
  /** Share of the load on `/checkout` (the route that calls the supplier); the rest on `/catalog`. @default 0.5 */
  checkoutShare?: number;
  /** Slots of the shop's shared pool. @default 50 */
  pool?: number;
  /** Requests allowed to wait for a slot. @default 100 */
  poolMaxWaiting?: number;
  /** Longest wait for a slot before a 503, in ms. @default 1000 */
  poolAcquireTimeoutMs?: number;
  /** When the user gives up (the load driver aborts), in ms. @default 2000 */
  userDeadlineMs?: number;
  /** The gateway's local deadline cap (prazo configuration), in ms. @default 1900 */
  gatewayDeadlineMs?: number;
  /** The naive per-attempt timeout, in ms. @default 30000 */
  naiveTimeoutMs?: number;
  /** The naive attempts per call. @default 3 */
  naiveAttempts?: number;
  /** Attempts prazo is asked for (calibration may reduce them to fit the deadline). @default 2 */
  prazoAttempts?: number;
  /** The supplier's healthy latency: log-normal with this median and p99, in ms. @default 40 / 180 */
  healthyMedianMs?: number;
  healthyP99Ms?: number;
  /**
   * Utilisation of each supplier instance by the healthy traffic (the checkouts' originals shared by
   * the instances): its service time is sized for it, see `supplierService`. @default 0.6
   */
  utilization?: number;
  /** Workers of each supplier instance (requests it works on at once; the rest queue, FIFO). @default 2 */
  supplierWorkers?: number;
  /** How long the trigger phase's capacity drop lasts, in ms, from 1 s into the phase. @default 3000 (2000 with `quick`), shortened to end with a shorter phase */
  triggerDropMs?: number;
  /** The trigger's capacity drop: the service time is multiplied by this. @default 3 */
  triggerFactor?: number;
  /** Share of 503s at the height of the error burst. @default 0.95 */
  burstShare?: number;
  /** Share of its requests the sick instance answers with 503 in the fleet phase. @default 1 */
  fleetSickShare?: number;
  /**
   * How much later than the healthy ones the slow instance answers in the fleet phase, in ms: its
   * median and p99 are the healthy ones plus this. @default 150
   */
  fleetSlowExtraMs?: number;
  /**
   * Share of the requests, on every instance, that are slow in the tail phase. @default 0.025 (enough
   * to own the p99, too few to move the p95 that triggers hedges)
   */
  tailShare?: number;
  /** Latency of a slow request in the tail phase, in ms. @default 1000 */
  tailMs?: number;
  /** Threshold of the retry-ratio alert (retries + hedges over originals). @default 0.05 */
  retryRatioAlert?: number;
  /** Threshold of the error-rate alert (share of failed checkouts). @default 0.05 */
  errorRateAlert?: number;
  /** Window both alert conditions are evaluated over, in ms. @default 2000 */
  alertWindowMs?: number;
  /** Seed of the supplier doubles' draws. @default 1 */
  seed?: number;
  /** Unmeasured traffic before the warm-up, so that cold processes do not spoil it, in ms. @default 4000 */
  preWarmMs?: number;
  /**
   * Also run the peers — cockatiel, opossum, undici's retry interceptor and an HAProxy sidecar — after
   * naive and prazo, two columns at a time, on the same arrivals (one report). @default false
   */
  peers?: boolean;
  /**
   * Length of the overload experiment, per configuration, in ms (3× the capacity of a supplier of
   * known capacity, offered to naive, prazo and prazo with its overload protections; see
   * `lab/src/overload/`). 0 leaves it out. @default 6000 (4500 with `quick`)
   */
  overloadMs?: number;
}

/** Default phase lengths: 90 s. */
export const DEFAULT_PHASES: Readonly<PhaseLengths> = Object.freeze({
  warmupMs: 15_000,
  triggerMs: 12_000,
  fleetMs: 10_000,
  degradeMs: 20_000,
  burstMs: 20_000,
  tailMs: 20_000,
  recoveryMs: 5_000,
});

/** Phase lengths of `--quick`: 31 s. */
export const QUICK_PHASES: Readonly<PhaseLengths> = Object.freeze({
  warmupMs: 5_000,
  triggerMs: 7_000,
  fleetMs: 5_000,
  degradeMs: 6_000,
  burstMs: 6_000,
  tailMs: 7_000,
  recoveryMs: 2_000,
});

/** Defaults of {@link DrillOptions}, taken from the article where it gives a figure. */
export const DRILL_DEFAULTS = Object.freeze({
  quick: false,
  rps: 100,
  checkoutShare: 0.5,
  pool: 50,
  poolMaxWaiting: 100,
  poolAcquireTimeoutMs: 1000,
  userDeadlineMs: 2000,
  gatewayDeadlineMs: 1900,
  naiveTimeoutMs: 30_000,
  naiveAttempts: 3,
  prazoAttempts: 2,
  healthyMedianMs: 40,
  healthyP99Ms: 180,
  utilization: 0.6,
  supplierWorkers: 2,
  triggerDropMs: undefined as number | undefined,
  triggerFactor: 3,
  burstShare: 0.95,
  fleetSickShare: 1,
  fleetSlowExtraMs: 150,
  tailShare: 0.025,
  tailMs: 1000,
  retryRatioAlert: 0.05,
  errorRateAlert: 0.05,
  alertWindowMs: 2000,
  seed: 1,
  preWarmMs: 4000,
  peers: false,
  overloadMs: undefined as number | undefined,
});

/** The overload experiment's length per configuration, by default and with `quick`. */
export const OVERLOAD_MS = Object.freeze({ default: 6_000, quick: 4_500 });

/** The trigger's capacity drop, by default and with `quick`, in ms. */
export const TRIGGER_DROP_MS = Object.freeze({ default: 3_000, quick: 2_000 });

/** {@link DrillOptions} with every field present. */
export type NormalizedDrillOptions = Omit<
  Required<DrillOptions>,
  'phases' | 'overloadMs' | 'triggerDropMs'
> & {
  phases: PhaseLengths;
  overloadMs: number;
  triggerDropMs: number;
};

/**
 * Fills in defaults and validates.
 * @throws InvalidOptionError naming the option.
 */
export function normalizeDrillOptions(options: DrillOptions = {}): NormalizedDrillOptions {
  const merged = { ...DRILL_DEFAULTS, ...stripUndefined(options) } as Required<DrillOptions>;
  const base = merged.quick ? QUICK_PHASES : DEFAULT_PHASES;
  const phases: PhaseLengths = { ...base, ...stripUndefined(options.phases ?? {}) };
  for (const [key, value] of Object.entries(phases)) {
    if (!Number.isFinite(value) || value < 500 || value > 600_000)
      throw new InvalidOptionError(`phases.${key}`, 'a number of ms in [500, 600000]', value);
  }
  const positive = (name: keyof typeof DRILL_DEFAULTS, max: number, integer = false) => {
    const value = merged[name] as number;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max)
      throw new InvalidOptionError(name, `a number in (0, ${max}]`, value);
    if (integer && !Number.isInteger(value)) throw new InvalidOptionError(name, 'an integer', value);
  };
  positive('rps', 2000);
  positive('pool', 10_000, true);
  positive('userDeadlineMs', 60_000);
  positive('gatewayDeadlineMs', 60_000);
  positive('naiveTimeoutMs', 600_000);
  positive('naiveAttempts', 10, true);
  positive('prazoAttempts', 10, true);
  positive('healthyMedianMs', 10_000);
  positive('healthyP99Ms', 60_000);
  positive('tailMs', 60_000);
  positive('fleetSlowExtraMs', 60_000);
  positive('alertWindowMs', 60_000);
  positive('poolAcquireTimeoutMs', 60_000);
  positive('supplierWorkers', 1000, true);
  positive('triggerFactor', 100);
  if (!(typeof merged.utilization === 'number' && merged.utilization >= 0.05 && merged.utilization <= 0.95))
    throw new InvalidOptionError('utilization', 'a number in [0.05, 0.95]', merged.utilization);
  if (phases.triggerMs < 1_100)
    throw new InvalidOptionError(
      'phases.triggerMs',
      'a number of ms in [1100, 600000] (the capacity drop starts 1 s into the phase)',
      phases.triggerMs,
    );
  // The default drop shortens to fit a short trigger phase; one given must fit as it is.
  const triggerDropMs =
    merged.triggerDropMs ??
    Math.min(merged.quick ? TRIGGER_DROP_MS.quick : TRIGGER_DROP_MS.default, phases.triggerMs - 1_000);
  if (!(Number.isFinite(triggerDropMs) && triggerDropMs >= 100 && triggerDropMs <= phases.triggerMs - 1_000))
    throw new InvalidOptionError(
      'triggerDropMs',
      `a number of ms in [100, ${phases.triggerMs - 1_000}] (the trigger phase less its first second)`,
      triggerDropMs,
    );
  if (!Number.isFinite(merged.preWarmMs) || merged.preWarmMs < 0 || merged.preWarmMs > 60_000)
    throw new InvalidOptionError('preWarmMs', 'a number of ms in [0, 60000]', merged.preWarmMs);
  for (const name of [
    'checkoutShare',
    'burstShare',
    'fleetSickShare',
    'tailShare',
    'retryRatioAlert',
    'errorRateAlert',
  ] as const) {
    const value = merged[name];
    if (typeof value !== 'number' || !(value >= 0 && value <= 1))
      throw new InvalidOptionError(name, 'a number in [0, 1]', value);
  }
  if (!Number.isInteger(merged.poolMaxWaiting) || merged.poolMaxWaiting < 0)
    throw new InvalidOptionError('poolMaxWaiting', 'an integer ≥ 0', merged.poolMaxWaiting);
  if (merged.healthyP99Ms < merged.healthyMedianMs)
    throw new InvalidOptionError(
      'healthyP99Ms',
      `a number ≥ healthyMedianMs (${merged.healthyMedianMs})`,
      merged.healthyP99Ms,
    );
  if (!Number.isInteger(merged.seed)) throw new InvalidOptionError('seed', 'an integer', merged.seed);
  const overloadMs = merged.overloadMs ?? (merged.quick ? OVERLOAD_MS.quick : OVERLOAD_MS.default);
  if (!(overloadMs === 0 || (Number.isFinite(overloadMs) && overloadMs >= 1_500 && overloadMs <= 120_000)))
    throw new InvalidOptionError('overloadMs', '0 (none) or a number of ms in [1500, 120000]', overloadMs);
  if (typeof merged.peers !== 'boolean') throw new InvalidOptionError('peers', 'a boolean', merged.peers);
  return { ...merged, phases, overloadMs, triggerDropMs };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
