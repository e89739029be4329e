import { InvalidOptionError } from '../errors.js';
import { integerIn, numberIn, objectOption, pathName } from '../option-checks.js';

/**
 * Options of {@link createGradientLimit}. Durations in ms; limits in calls in flight.
 */
export interface GradientLimitOptions {
  /** Limit once the first windows (a no-load probe at `minLimit`) have measured the no-load latency. @default 20 */
  initialLimit?: number;
  /**
   * The floor: the limit never goes below it, so a quiet or briefly slow dependency keeps working
   * (and the first no-load probe runs at it). @default 4
   */
  minLimit?: number;
  /** The ceiling. @default 1000 */
  maxLimit?: number;
  /**
   * How much slower than the no-load latency a window's latency may be before it counts as
   * queueing (1.05: up to 5 % above), with `noiseMs`. It absorbs measurement noise; the limit
   * settles a little above `tolerance ×` the dependency's Little's-law concurrency (1.16–1.25 ×
   * measured, see {@link createGradientLimit}). @default 1.05
   */
  tolerance?: number;
  /**
   * Latency above the no-load latency, in ms, that is never taken for queueing whatever the ratio:
   * the jitter of the caller's own event loop and of the network, which is no sign of a queue at a
   * dependency that answers in a millisecond. @default 1
   */
  noiseMs?: number;
  /** Weight of a new estimate against the current limit (exponential smoothing), 0 … 1. @default 0.2 */
  smoothing?: number;
  /**
   * Shortest sample window, in ms: the limit changes at most once per window (a probe's windows
   * close on `windowSamples` alone). @default 100
   */
  windowMs?: number;
  /** Round trips a window needs before it closes (a quiet dependency updates less often). @default 10 */
  windowSamples?: number;
  /**
   * Time between two re-measurements of the no-load latency, in ms: the limit is held at half of
   * itself, or of the most calls in flight since the last probe when fewer ({@link PROBE_SHARE}, at
   * least `minLimit`), for {@link PROBE_WINDOWS} windows and the lowest of their latencies becomes
   * the no-load latency (it may rise: the dependency got slower for good). @default 60000
   */
  probeIntervalMs?: number;
  /** Relative jitter of `probeIntervalMs` (0.15: ± 15 %), so that clients do not probe together. @default 0.15 */
  probeJitter?: number;
  /**
   * The multiplicative decrease of a **drop** (a call that ran out of time while at least half of
   * the window's round trips did, the window holding `windowSamples` of them): the limit becomes `backoffRatio ×` the calls that were in flight
   * (or the limit, if lower), at once, without waiting for the window to close. One drop per
   * flight: a drop of a call sent before the last decrease adds nothing (TCP NewReno's rule), so a
   * burst of timeouts cuts once, not once each. 1 turns drops off.
   * @default 0.5
   */
  backoffRatio?: number;
}

/**
 * Windows a no-load probe lasts; the lowest of their latencies is the no-load latency. More than one,
 * so that the costs of a cold start (connections opening, code not yet optimised) that fall in the
 * first one do not pass for the dependency's latency.
 */
export const PROBE_WINDOWS = 3;

/**
 * Share of the limit a periodic no-load probe holds it at (the first probe, which knows nothing,
 * runs at `minLimit`). The limit settles at 1.16–1.25 × the dependency's concurrency at capacity,
 * so half of it leaves the dependency idle workers: its round trips are no-load ones.
 */
export const PROBE_SHARE = 0.5;

/**
 * Windows in a row held at the floor, the floor fully used and latency above the no-load latency —
 * with no drop and no call refused by the dependency (`refused`: it sheds load, it is past its
 * capacity) during them — after which the no-load latency is re-measured before the probe interval is over (see
 * {@link EARLY_PROBE_DIVISOR}).
 */
export const EARLY_PROBE_WINDOWS = 5;

/**
 * A decline of the limit that did not move the latency: once the limit — in use to the full, so
 * that it binds — has fallen to this share of what it was when the windows began to read queueing
 * (or of the calls in flight then, if fewer: a limit above them binds nothing as it falls),
 * with no drop and no call refused by the dependency since, while the latency stayed within
 * {@link STEADY_LATENCY} of what it was early in the decline ({@link DECLINE_REFERENCE}), the
 * no-load latency is re-measured early (see {@link EARLY_PROBE_DIVISOR}). A queue this client makes
 * shrinks when it sends less; a latency that does not is not its queue (an instance farther away,
 * peers' load on a busy but coping dependency).
 */
export const FUTILE_DECLINE = 0.5;

/**
 * How far the latency may move, as a ratio either way, and still count as unchanged by a decline
 * ({@link FUTILE_DECLINE}); a latency that keeps rising is a queue still growing, not one the limit
 * cannot touch.
 */
export const STEADY_LATENCY = 1.35;

/**
 * The decline's reference latency is the last one measured while the limit was above this share of
 * where the decline began ({@link FUTILE_DECLINE}).
 */
export const DECLINE_REFERENCE = 0.75;

/**
 * Windows in a row whose latency, two standard errors above it included, is below the no-load
 * latency divided by {@link STEADY_LATENCY}, after which the no-load latency is re-measured by a
 * probe at half the limit, as a periodic one: it was learnt too high (a probe that met an incident,
 * a cold start), and until it is re-learnt the limit grows past the dependency's capacity — to the
 * calls in flight at which the queue's latency reaches it. Not held to {@link EARLY_PROBE_DIVISOR}:
 * once re-learnt, the latency is no longer below it.
 */
export const FASTER_WINDOWS = 5;

/**
 * An early probe comes at most once per `probeIntervalMs / EARLY_PROBE_DIVISOR` (6 s by default)
 * after the previous probe ended.
 */
export const EARLY_PROBE_DIVISOR = 10;

/**
 * Round trips a window keeps (a uniform sample of them when there are more). The window's latency
 * is their mean without the outliers above {@link OUTLIER_FACTOR} × their median: a stall (a GC
 * pause, a starved event loop) does not drag it up as it would a plain mean, and unlike a median
 * (Envoy's default aggregate) it still moves when a third of the calls queue.
 */
export const RESERVOIR_SIZE = 64;

/** Round trips slower than this many times the window's median are left out of its latency. */
export const OUTLIER_FACTOR = 3;

/** {@link GradientLimitOptions} with every default applied. */
export type NormalizedGradientLimitOptions = Readonly<Required<GradientLimitOptions>>;

/** Defaults of {@link GradientLimitOptions}. */
export const GRADIENT_LIMIT_DEFAULTS: NormalizedGradientLimitOptions = Object.freeze({
  initialLimit: 20,
  minLimit: 4,
  maxLimit: 1000,
  tolerance: 1.05,
  noiseMs: 1,
  smoothing: 0.2,
  windowMs: 100,
  windowSamples: 10,
  probeIntervalMs: 60_000,
  probeJitter: 0.15,
  backoffRatio: 0.5,
});

/** What a gradient limit holds now. */
export interface GradientLimitState {
  /** The limit in force (an integer ≥ `minLimit`; held down while probing). */
  limit: number;
  /** The estimate behind it, before rounding. */
  estimate: number;
  /** The no-load latency (the last probe's lowest window latency + 2 standard errors), ms; undefined before the first window. */
  noLoadMs: number | undefined;
  /** Mean latency of the last closed window, ms; undefined before the first. */
  rttMs: number | undefined;
  /** Whether the limit is held down (at `minLimit` in the first probe) to re-measure the no-load latency. */
  probing: boolean;
  /**
   * Whether the limit is still in its **slow start**: doubling, one round trip of every slot at a
   * time, while callers wait for a slot, until a window reads queueing or a drop comes.
   */
  slowStart: boolean;
  /** Drops that cut the limit so far (a burst of timeouts of one flight counts once). */
  drops: number;
  /**
   * The no-load probes so far, by what started each: the periodic ones (the first, which knows
   * nothing, included), and the early ones — of a limit held at its floor ({@link EARLY_PROBE_WINDOWS}),
   * of a decline that did not move the latency ({@link FUTILE_DECLINE}), and of windows markedly
   * faster than the no-load latency ({@link FASTER_WINDOWS}). Says why the no-load latency is what
   * it is. A copy: the limit's own counts do not change under the caller.
   */
  probes: ProbeCounts;
}

/** No-load probes by what started them (see {@link GradientLimitState.probes}). */
export interface ProbeCounts {
  periodic: number;
  floor: number;
  futile: number;
  faster: number;
}

/** A concurrency limit learnt from latency. Pure: time comes in as arguments, randomness is injected. */
export interface GradientLimit {
  /** The limit in force now (calls in flight). */
  limit(): number;
  /**
   * The limit in force once the no-load probe under way ends: a probe holds the limit down for a
   * few windows only, and a wait is spent mostly after it. The limit itself when no probe is
   * under way (or the probe is an early one, at the limit in force).
   */
  steadyLimit(): number;
  /**
   * Feeds one round trip of `rttMs` that started at `startedMs` and ended at `nowMs`, with
   * `inFlight` calls in flight when it ended (this one included) and `waiting` callers waiting for a
   * slot (0 when not said: the limit then never doubles, see "Slow start").
   */
  sample(rttMs: number, startedMs: number, nowMs: number, inFlight: number, waiting?: number): void;
  /**
   * Feeds a **drop**: a call that started at `startedMs` ran out of time at `nowMs` after `rttMs`
   * (the dependency is at least that slow: a censored sample), with `inFlight` calls in flight (this
   * one included, and the work the client abandoned that the dependency is likely still doing). When
   * at least half of the open window's round trips (this one included) ran out of time, cuts the
   * limit to `backoffRatio × min(limit, inFlight)` at once, unless the call started before the last
   * cut (the cut already answered its flight); then feeds `rttMs` as a sample.
   */
  drop(rttMs: number, startedMs: number, nowMs: number, inFlight: number): void;
  /**
   * Tells the limit that a call ended refused by the dependency at `nowMs` (a 429, 502, 503 or 504:
   * it sheds load): no early probe follows for the windows that saw it (see {@link EARLY_PROBE_WINDOWS}).
   */
  refused(nowMs: number): void;
  /** The latency of the last window, else the no-load latency, else undefined (nothing measured yet), in ms. */
  latencyMs(): number | undefined;
  state(): GradientLimitState;
}

/**
 * Validates {@link GradientLimitOptions} and applies {@link GRADIENT_LIMIT_DEFAULTS}.
 * @param optionPath prefix of the option names in error messages (`'concurrency.'`).
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeGradientLimitOptions(
  options: GradientLimitOptions = {},
  optionPath = '',
): NormalizedGradientLimitOptions {
  objectOption(pathName(optionPath), options);
  const d = GRADIENT_LIMIT_DEFAULTS;
  const int = (name: keyof GradientLimitOptions, min: number): number =>
    integerIn(`${optionPath}${name}`, options[name] ?? d[name], min, 1_000_000);
  const num = (name: keyof GradientLimitOptions, min: number, max: number, expected: string): number =>
    numberIn(`${optionPath}${name}`, options[name] ?? d[name], { min, max }, expected);
  const minLimit = int('minLimit', 1);
  const maxLimit = int('maxLimit', 1);
  if (maxLimit < minLimit)
    throw new InvalidOptionError(`${optionPath}maxLimit`, `an integer ≥ minLimit (${minLimit})`, maxLimit);
  const initialLimit = options.initialLimit ?? Math.min(maxLimit, Math.max(minLimit, d.initialLimit));
  if (!Number.isInteger(initialLimit) || initialLimit < minLimit || initialLimit > maxLimit)
    throw new InvalidOptionError(
      `${optionPath}initialLimit`,
      `an integer from minLimit (${minLimit}) to maxLimit (${maxLimit})`,
      initialLimit,
    );
  return Object.freeze({
    initialLimit,
    minLimit,
    maxLimit,
    tolerance: num('tolerance', 1, 10, 'a number from 1 to 10'),
    noiseMs: num('noiseMs', 0, 60_000, 'a number of ms from 0 to 60000'),
    smoothing: num('smoothing', Number.MIN_VALUE, 1, 'a number > 0 and ≤ 1'),
    windowMs: num('windowMs', 1, 3_600_000, 'a number of ms from 1 to 3600000'),
    windowSamples: int('windowSamples', 1),
    probeIntervalMs: num('probeIntervalMs', 1, 86_400_000, 'a number of ms from 1 to 86400000'),
    probeJitter: num('probeJitter', 0, 0.99, 'a number from 0 to 0.99'),
    backoffRatio: num('backoffRatio', 0.1, 1, 'a number from 0.1 to 1'),
  });
}

/**
 * Creates an adaptive concurrency limit computed from latency: the **gradient** algorithm of
 * Envoy's adaptive concurrency filter and Netflix's concurrency-limits (`GradientLimit`).
 *
 * Round trips are gathered in windows (at least `windowMs` and `windowSamples`). When a window
 * closes, its latency `rtt` (the mean of a uniform sample of {@link RESERVOIR_SIZE} round trips,
 * outliers above 3 × their median left out; `se` its standard error) is compared with the no-load
 * latency `noLoad` (measured by the last probe: the lowest `rtt + 2 × se` of its windows; see
 * {@link STANDARD_ERRORS}):
 *
 *     gradient = rtt > noLoad × tolerance + noiseMs + 2 × se
 *              ? max(0.5, (noLoad × tolerance + noiseMs) / rtt) : 1
 *     target   = limit × gradient + (gradient = 1 and the limit was used ? √limit : 0)
 *     limit    = clamp(limit × (1 − smoothing) + target × smoothing, minLimit, maxLimit)
 *
 * Latency at no-load level (gradient 1) lets the limit grow by a headroom of √limit, but only when
 * at least half of it was in use (a quiet caller proves nothing about capacity). Queueing (latency
 * above `noLoad × tolerance + noiseMs + 2 × se`) shrinks the limit in proportion, halving it at most per window. By
 * Little's law a dependency with W workers and service time S answers in S × C / W once C > W calls
 * are in flight, so the gradient is W × tolerance / C and the limit would settle at `tolerance × W`,
 * its concurrency at capacity. Envoy and Netflix add the headroom on every update, which settles at
 * W × tolerance + √W (a standing queue of √W); prazo adds it only when no queueing is measured.
 * Measured, it settles at 1.16–1.25 × W: a short queue makes the window's round trips vary, and the
 * two standard errors a window must exceed grow with them (docs/overload.md).
 *
 * **No-load probe.** Only a probe sets the no-load latency. Every `probeIntervalMs` (± jitter)
 * the limit is held at half of itself, or of the most calls in flight since the last probe when
 * fewer ({@link PROBE_SHARE}, at least `minLimit`), for {@link PROBE_WINDOWS} windows of calls
 * started after the probe began; the lowest of their latencies replaces the no-load latency, so
 * a dependency that became slower for good is not
 * mistaken for a queue forever. Envoy pins its concurrency to a floor to measure its minRTT; held at
 * `minLimit` (4), a caller with 40 calls in flight (400 a second to a dependency answering in 100 ms)
 * queued ≈ 300 calls and had ≈ 800 refused over the probe's ≈ 750 ms. Half the limit is below the
 * dependency's concurrency at capacity (the limit settles at 1.16–1.25 × it), so its workers
 * are not all busy and the round trips are no-load ones, and a healthy caller's demand (the limit
 * grows only while half of it is in use) mostly fits. Half of the most calls in flight since the
 * last probe when they are fewer (not of the last window's: a bursty caller's quiet spell would
 * probe it at the floor): a limit that grew on a no-load latency learnt in a queue (a first probe
 * that met a cold start) is above every call its callers send, and a probe at half of it would
 * queue too and re-learn the same latency for good. The first windows are a probe at `minLimit`,
 * which knows nothing yet: until they close the limit is `minLimit`, then `initialLimit`, from
 * where it adapts. A limit held at its floor, fully used, by a latency above the
 * no-load one for {@link EARLY_PROBE_WINDOWS} windows probes early (at most once per
 * `probeIntervalMs / EARLY_PROBE_DIVISOR`): a latency that is not a queue (an instance farther away,
 * a slower release) would otherwise keep callers waiting for a slot until the next probe. So does a
 * limit, in use, that has halved without moving the latency ({@link FUTILE_DECLINE}): a queue this
 * caller makes shrinks when it sends less, and one it does not make is no reason to hold it back.
 * An early probe measures at the limit in force, then for as many windows at half of it — never at
 * the floor — and the lowest window is the no-load latency: a latency the limit did not move is the
 * same at half, while one that is partly the caller's own queue (a capacity drop, where the limit
 * settles at 1.2–1.5 × the few workers left) is not (see `src/policy/gradient-limit.test.ts`, "learns
 * no queue in an early probe during a capacity drop"). A no-load latency learnt too high — windows well below it,
 * {@link FASTER_WINDOWS} in a row — is re-measured at once by a probe at half, as a periodic one:
 * judged against it, the dependency's queue would read as no queue.
 *
 * **Slow start.** A new limit does not know the dependency's capacity, and growing by a smoothed
 * √limit per window (about one call per 100 ms at 20) is far too slow for a caller whose demand is
 * above `initialLimit` from its start: at 400 calls a second to a dependency answering in 100 ms
 * (40 in flight), a new dependency's limit took seconds to reach 40, its callers queued behind 20
 * slots meanwhile, and hundreds were refused. As TCP's congestion window does, the limit first
 * **doubles** each window in which callers waited for a slot (`waiting`) with
 * every slot in use and no queueing was read, such a window closing once it holds a round trip of
 * every slot (`max(windowSamples, limit)` samples) if `windowMs` has not closed it first, until the first window that reads
 * queueing or the first drop; from then on it adapts as above, and it never starts slow again. A
 * caller that says nothing of its waiters (`waiting` 0) gets the growth above from the start.
 *
 * @see Envoy, "Adaptive Concurrency" filter (gradient controller, minRTT calculation):
 *   https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/adaptive_concurrency_filter
 * @see Netflix concurrency-limits, `GradientLimit` / `Gradient2Limit`: https://github.com/Netflix/concurrency-limits
 * @example
 * const limit = createGradientLimit({ minLimit: 4 }, Math.random);
 * limit.sample(rttMs, startedMs, Date.now(), inFlight);
 * if (inFlight < limit.limit()) send();
 */
export function createGradientLimit(
  options: GradientLimitOptions = {},
  random: () => number = Math.random,
): GradientLimit {
  return gradientLimitFrom(normalizeGradientLimitOptions(options), random);
}

/**
 * {@link createGradientLimit} over options `normalizeGradientLimitOptions()` already validated (a
 * dependency's `concurrency`, validated with the rest of its options): no second pass.
 */
export function gradientLimitFrom(o: NormalizedGradientLimitOptions, random: () => number): GradientLimit {
  let estimate = o.initialLimit;
  // The first window is a probe (every sample counts): a no-load latency measured while the
  // initial limit already queues calls at a small dependency would be a queueing latency.
  let limit = o.minLimit;
  let noLoad: number | undefined;
  let rtt: number | undefined;
  // The open window.
  let windowStart = Number.NaN;
  // A uniform sample of the window's round trips (Algorithm R).
  const reservoir = new Float64Array(RESERVOIR_SIZE);
  let count = 0;
  // Of the window's round trips, those that ran out of time (censored samples).
  let timeouts = 0;
  let peak = 0;
  // The most calls in flight since the last probe ended (a periodic probe halves them, see "No-load probe").
  let peakSinceProbe = 0;
  // Whether a caller waited for a slot during the window (see "Slow start").
  let waited = false;
  let probeAt = Number.NaN;
  let probeStart = Number.NEGATIVE_INFINITY;
  let probeLow = Number.POSITIVE_INFINITY;
  let probeWindows = 0;
  // When the last probe ended, and how many windows in a row since have held the limit at its
  // floor, fully used, with latency above the no-load latency (see EARLY_PROBE_WINDOWS).
  let probedAt = Number.NEGATIVE_INFINITY;
  let floorWindows = 0;
  // Windows in a row markedly faster than the no-load latency (see FASTER_WINDOWS).
  let fasterWindows = 0;
  // When a call last ended refused by the dependency (it sheds load: no early probe).
  let refusedAt = Number.NEGATIVE_INFINITY;
  // The decline under way (see FUTILE_DECLINE): when it began, and the estimate and latency then.
  let declineAt = Number.NaN;
  let declineFrom = 0;
  let declineLatency = 0;
  // The last multiplicative decrease (a drop of a call sent before it adds nothing), and how many.
  let droppedAt = Number.NEGATIVE_INFINITY;
  let drops = 0;
  // Until the first window that reads queueing, or the first drop (see "Slow start").
  let slowStart = true;
  // Probes by what started them; the first, under way from the start, counts as a periodic one.
  const probes: ProbeCounts = { periodic: 1, floor: 0, futile: 0, faster: 0 };

  // Whether the probe under way is an early one still at the limit in force ("No-load probe" above).
  let thenAtHalf = false;
  /** Half the limit, or of the most calls in flight since the last probe if fewer: where a probe at half measures. */
  const halfLimit = (): number =>
    Math.max(o.minLimit, Math.floor(Math.min(estimate, peakSinceProbe) * PROBE_SHARE));
  const nextProbe = (nowMs: number): number =>
    nowMs + o.probeIntervalMs * (1 + o.probeJitter * (2 * random() - 1));
  const open = (nowMs: number): void => {
    windowStart = nowMs;
    count = 0;
    timeouts = 0;
    peak = 0;
    waited = false;
  };
  const apply = (value: number): void => {
    estimate = Math.min(o.maxLimit, Math.max(o.minLimit, value));
    limit = Math.floor(estimate);
  };

  const close = (nowMs: number): void => {
    const { mean: latency, standardError } = robustMean(reservoir, Math.min(count, RESERVOIR_SIZE));
    // What the window proves, given how much its round trips vary: its latency is at most this
    // high with ~97.5 % confidence (mean + 2 standard errors).
    const noise = STANDARD_ERRORS * standardError;
    rtt = latency;
    if (!Number.isNaN(probeStart)) {
      // A probe's window: the lowest of its windows is the no-load latency now, higher or lower.
      probeLow = Math.min(probeLow, latency + noise);
      if (++probeWindows === PROBE_WINDOWS && thenAtHalf) {
        // An early probe's second part: as many windows at half the limit ("No-load probe" above).
        thenAtHalf = false;
        probeStart = nowMs;
        probeWindows = 0;
        limit = halfLimit();
      } else if (probeWindows === PROBE_WINDOWS) {
        noLoad = probeLow;
        probeStart = Number.NaN;
        probeAt = nextProbe(nowMs);
        probedAt = nowMs;
        peakSinceProbe = 0;
        floorWindows = 0;
        fasterWindows = 0;
        limit = Math.floor(estimate);
      }
      open(nowMs);
      return;
    }
    // Only a probe sets the no-load latency: the mean of a few round trips of a dependency whose
    // latency varies is often far below its true mean, and the lowest of the many windows between
    // two probes would pass every ordinary window for a queue.
    if (noLoad === undefined) noLoad = latency + noise;
    // Queueing only beyond what the window's own spread explains; then in proportion, as before.
    const tolerated = noLoad * o.tolerance + o.noiseMs;
    const gradient = latency > tolerated + noise ? Math.max(0.5, tolerated / latency) : 1;
    const used = peak * 2 >= limit;
    const before = estimate;
    if (gradient < 1) slowStart = false;
    if (slowStart && waited && peak >= limit) apply(estimate * 2);
    else if (gradient < 1 || used) {
      const target = estimate * gradient + (gradient === 1 ? Math.sqrt(estimate) : 0);
      apply(estimate * (1 - o.smoothing) + target * o.smoothing);
    }
    // Held at the floor, the floor in use, and still slower than the no-load latency: either the
    // dependency is past its capacity, or its no-load latency is not what it was (an instance
    // farther away, a slower release), and a limit that keeps callers waiting for a slot while the
    // dependency is not queueing is the outage. Re-measure early, at most once per
    // `probeIntervalMs / EARLY_PROBE_DIVISOR`: a dependency really past its capacity keeps its
    // timeouts (drops) to cut the limit again, and its probe finds the high latency it must serve at.
    floorWindows =
      gradient < 1 &&
      limit === o.minLimit &&
      peak >= limit &&
      droppedAt < windowStart &&
      refusedAt < windowStart
        ? floorWindows + 1
        : 0;
    // A decline that did not move the latency (FUTILE_DECLINE): the same re-measurement. It lasts
    // until the limit is back where it began (a window of no queueing now and then is noise).
    if (!Number.isNaN(declineAt) && estimate >= declineFrom) declineAt = Number.NaN;
    if (gradient < 1 && Number.isNaN(declineAt)) {
      declineAt = windowStart;
      declineFrom = Math.min(before, Math.max(peak, o.minLimit));
    }
    // The latency the decline is judged against: the last one measured before the limit had fallen
    // by a quarter (a step change shows in full only a window or two after it began).
    if (!Number.isNaN(declineAt) && estimate > declineFrom * DECLINE_REFERENCE) declineLatency = latency;
    const futile =
      !Number.isNaN(declineAt) &&
      peak >= limit &&
      estimate <= declineFrom * FUTILE_DECLINE &&
      latency * STEADY_LATENCY >= declineLatency &&
      latency <= declineLatency * STEADY_LATENCY &&
      droppedAt < declineAt &&
      refusedAt < declineAt;
    // An early probe re-measures where the limit is: its reason is a latency the limit does not
    // move, and holding the callers at the floor to measure it would only queue them in the client
    // (in the drill's sick/slow phase, a dozen calls refused while it lasted).
    let early = false;
    if (
      (floorWindows >= EARLY_PROBE_WINDOWS || futile) &&
      nowMs - probedAt >= o.probeIntervalMs / EARLY_PROBE_DIVISOR
    ) {
      probeAt = nowMs;
      early = true;
      // Held at the floor counts first: a decline to the floor is often futile too.
      if (floorWindows >= EARLY_PROBE_WINDOWS) probes.floor++;
      else probes.futile++;
    }
    // A no-load latency learnt too high (FASTER_WINDOWS): re-measured at half, as a periodic probe.
    fasterWindows = latency + noise < noLoad / STEADY_LATENCY ? fasterWindows + 1 : 0;
    const faster = fasterWindows >= FASTER_WINDOWS && !early && nowMs < probeAt;
    if (faster) {
      probeAt = nowMs;
      probes.faster++;
    } else if (!early && nowMs >= probeAt) probes.periodic++;
    if (nowMs >= probeAt) {
      declineAt = Number.NaN;
      probeStart = nowMs;
      probeLow = Number.POSITIVE_INFINITY;
      probeWindows = 0;
      // A periodic probe at half the limit or of the most calls in flight since the last probe,
      // whichever is lower (see "No-load probe"), an early one at the limit, then at half.
      thenAtHalf = early;
      if (!early) limit = halfLimit();
    }
    open(nowMs);
  };

  const sample = (rttMs: number, startedMs: number, nowMs: number, inFlight: number, waiting = 0): void => {
    if (!(rttMs >= 0) || !Number.isFinite(rttMs) || !Number.isFinite(nowMs)) return;
    // While probing, only calls admitted under the probe's limit measure the no-load latency.
    if (!Number.isNaN(probeStart) && startedMs < probeStart) return;
    if (Number.isNaN(windowStart)) open(nowMs);
    if (count < RESERVOIR_SIZE) reservoir[count] = rttMs;
    else {
      const slot = Math.floor(random() * (count + 1));
      if (slot < RESERVOIR_SIZE) reservoir[slot] = rttMs;
    }
    count++;
    if (inFlight > peak) {
      peak = inFlight;
      if (inFlight > peakSinceProbe) peakSinceProbe = inFlight;
    }
    if (waiting > 0) waited = true;
    // A probe's windows need no time: they close on samples alone, so that a probe (the first
    // one, at start, above all) holds the limit at the floor for as short a time as it can. In the
    // slow start, with callers waiting, a window also closes on a round trip of every slot.
    if (
      count >= o.windowSamples &&
      (!Number.isNaN(probeStart) ||
        nowMs - windowStart >= o.windowMs ||
        (slowStart && waited && count >= limit))
    )
      close(nowMs);
  };

  return {
    limit: () => limit,
    steadyLimit: () => (Number.isNaN(probeStart) ? limit : Math.max(limit, Math.floor(estimate))),
    sample,
    drop(rttMs, startedMs, nowMs, inFlight) {
      if (!Number.isFinite(nowMs)) return;
      // A drop when at least half of the window's round trips ran out of time, once it holds
      // `windowSamples` of them: the tail of a dependency working at its capacity (a few timeouts
      // among answers) is the gradient's to judge — a window's first round trip timing out is no
      // sign of more — and a flight that mostly times out is past it.
      timeouts++;
      if (
        startedMs >= droppedAt &&
        count + 1 >= o.windowSamples &&
        timeouts * 2 >= count + 1 &&
        o.backoffRatio < 1 &&
        Number.isNaN(probeStart)
      ) {
        droppedAt = nowMs;
        drops++;
        slowStart = false;
        const flight = inFlight >= 1 ? Math.min(estimate, inFlight) : estimate;
        apply(flight * o.backoffRatio);
        // The open window's samples were taken before the cut: the next window judges the new limit.
        open(nowMs);
        timeouts = 1;
      }
      sample(rttMs, startedMs, nowMs, inFlight);
    },
    refused(nowMs) {
      if (Number.isFinite(nowMs)) refusedAt = nowMs;
    },
    latencyMs: () => rtt ?? noLoad,
    state: () => ({
      limit,
      estimate,
      noLoadMs: noLoad,
      rttMs: rtt,
      probing: !Number.isNaN(probeStart),
      slowStart,
      drops,
      probes: { ...probes },
    }),
  };
}

/**
 * Standard errors of a window's mean by which its latency must exceed the no-load latency before it
 * counts as queueing (and which a probe's windows add to their means): a window's latency is the mean of a sample, and a dependency whose
 * round trips vary (a log-normal with p99 = 4.5 × its median varies by 70 % of its mean) gives means of
 * ten round trips that differ by 20 % from one window to the next without any queue.
 */
export const STANDARD_ERRORS = 2;

/**
 * The mean of the first `n` values of `values` that are at most {@link OUTLIER_FACTOR} × their
 * median (sorts them in place), and that mean's standard error (0 for one value).
 */
function robustMean(values: Float64Array, n: number): { mean: number; standardError: number } {
  const sorted = values.subarray(0, n).sort();
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const cap = median * OUTLIER_FACTOR;
  let sum = 0;
  let squares = 0;
  let kept = 0;
  while (kept < n && sorted[kept]! <= cap) {
    const value = sorted[kept++]!;
    sum += value;
    squares += value * value;
  }
  const mean = sum / kept;
  const variance = kept > 1 ? Math.max(0, (squares - kept * mean * mean) / (kept - 1)) : 0;
  return { mean, standardError: Math.sqrt(variance / kept) };
}
