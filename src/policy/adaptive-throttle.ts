import { boolean, integerIn, numberIn, objectOption, pathName } from '../option-checks.js';
import { judgeStatus } from './classify.js';

/** Options of {@link createAdaptiveThrottle}. */
export interface AdaptiveThrottleOptions {
  /**
   * The multiplier K of the SRE book: the client keeps sending while requests ≤ K × accepts, and
   * beyond that sends about K times what the dependency accepts. Lower is more aggressive (1.1
   * wastes little of the dependency's capacity on rejections but reacts late to its recovery). @default 2
   */
  k?: number;
  /** Length of the sliding window over which requests and accepts are counted, in ms. @default 10000 */
  windowMs?: number;
  /** Slots the window is cut into (it moves one slot at a time). @default 50 */
  bucketCount?: number;
  /**
   * Whether a request rejected locally counts as a request, as in the SRE book. Counting them keeps
   * the client sending K × accepts however far the offered load exceeds what the dependency takes,
   * but a throttle that closed during an outage then reopens only as fast as its few sent requests
   * bring accepts back: ≈ `windowMs / K × ln(requests in a window)`, half a minute after a 10 s
   * outage at 25 calls/s with the defaults. Not counting them (the default, as Envoy's admission
   * control does) measures the dependency alone: the probability falls to 0 within about a second
   * of its recovery, an outage is probed at about √(offered per window) requests per window, and a
   * load L × what the dependency takes is sent at about √(K × L) × what it takes (2.4× at 3×,
   * 4.5× at 10×) instead of K×. @default false
   */
  countRejected?: boolean;
}

/** {@link AdaptiveThrottleOptions} with every default applied. */
export type NormalizedAdaptiveThrottleOptions = Readonly<Required<AdaptiveThrottleOptions>>;

/** Defaults of {@link AdaptiveThrottleOptions} (K = 2 as the SRE book recommends). */
export const ADAPTIVE_THROTTLE_DEFAULTS: NormalizedAdaptiveThrottleOptions = Object.freeze({
  k: 2,
  windowMs: 10_000,
  bucketCount: 50,
  countRejected: false,
});

/** What the throttle's window holds. */
export interface AdaptiveThrottleState {
  /** Requests in the window: calls that reached the dependency (and, with `countRejected`, the ones rejected locally). */
  requests: number;
  /** Requests the dependency accepted. */
  accepts: number;
  /** The local rejection probability now: max(0, (requests − K × accepts) / (requests + 1)). */
  probability: number;
}

/**
 * Client-side adaptive throttling. Pure: time comes in as `nowMs`, randomness as a number.
 */
export interface AdaptiveThrottle {
  /** The probability of rejecting a new request locally now. */
  probability(nowMs: number): number;
  /**
   * Decides whether to reject a new request locally, given a uniform `random` in [0, 1): returns 0
   * to send it, or the rejection probability it was rejected with (> 0). With `countRejected` a
   * rejection is counted as a request at once.
   */
  reject(nowMs: number, random: number): number;
  /** Counts a request that reached the dependency, and whether the dependency accepted it. */
  record(accepted: boolean, nowMs: number): void;
  state(nowMs: number): AdaptiveThrottleState;
}

/**
 * Whether an answer with `status` counts as accepted by the dependency: every status except 429,
 * 502, 503 and 504 (the answers of a server, or of a proxy in front of it, that refused the work or
 * could not get it done). A 500 is accepted: the dependency took the work, and a bug is not overload.
 */
export function acceptedStatus(status: number): boolean {
  return !judgeStatus(status).refused;
}

/**
 * Validates {@link AdaptiveThrottleOptions} and applies {@link ADAPTIVE_THROTTLE_DEFAULTS}.
 * @param optionPath prefix of the option names in error messages (`'throttle.'`).
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeAdaptiveThrottleOptions(
  options: AdaptiveThrottleOptions = {},
  optionPath = '',
): NormalizedAdaptiveThrottleOptions {
  objectOption(pathName(optionPath), options);
  const d = ADAPTIVE_THROTTLE_DEFAULTS;
  const p = optionPath;
  const k = numberIn(`${p}k`, options.k ?? d.k, { min: 1, max: 100 }, 'a number from 1 to 100');
  const windowMs = numberIn(
    `${p}windowMs`,
    options.windowMs ?? d.windowMs,
    { min: 1, max: 86_400_000 },
    'a number of ms from 1 to 86400000',
  );
  const bucketCount = integerIn(`${p}bucketCount`, options.bucketCount ?? d.bucketCount, 1, 10_000);
  const countRejected = boolean(`${p}countRejected`, options.countRejected ?? d.countRejected);
  return Object.freeze({ k, windowMs, bucketCount, countRejected });
}

/**
 * Creates the adaptive throttle of one dependency (Google SRE book, "Handling Overload",
 * client-side throttling): over a sliding window the client counts `requests` (the requests that
 * reached the dependency) and `accepts` (those the dependency accepted), and rejects a new request
 * locally with probability
 *
 *     max(0, (requests − K × accepts) / (requests + 1))
 *
 * While the dependency accepts everything the probability is 0 (requests ≤ accepts < K × accepts).
 * When it accepts only a fraction, the client keeps sending enough to notice its recovery, little
 * enough that rejected work stops costing it.
 *
 * **What counts as a request.** The SRE book counts the requests rejected locally too
 * (`countRejected: true`): the client then sends K × accepts at any overload, but after an outage
 * its own rejections keep the probability up and it reopens slowly — every few seconds it doubles
 * what it sends (see the option). By default prazo counts only what reached the dependency, as
 * Envoy's admission control filter does ("if we were to record the requests rejected, the
 * rejection probabilities would not converge back to 0 even if the upstream success rate returns
 * to 100 %"): during an outage about √(offered per window) requests per window still go out as
 * probes, and once the dependency accepts them the probability falls to 0 within about a second.
 *
 * **Recovery.** Once the dependency accepts everything again, old counts slide out of the window
 * and new accepts come in; the tests check the bounds of both variants.
 *
 * The window is a ring of `bucketCount` slots: memory is fixed and every operation O(1) amortised.
 *
 * @see Beyer et al., *Site Reliability Engineering* (O'Reilly 2016), ch. 21 "Handling Overload",
 *   section "Client-side throttling": https://sre.google/sre-book/handling-overload/
 * @see Envoy, "Admission Control" filter (rejected requests are not sampled):
 *   https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/admission_control_filter
 * @example
 * const throttle = createAdaptiveThrottle({ k: 2 });
 * const p = throttle.reject(Date.now(), Math.random());
 * if (p > 0) throw new ThrottledError('inventory', p);
 * throttle.record(response.status !== 503 && response.status !== 429, Date.now());
 */
export function createAdaptiveThrottle(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle {
  return adaptiveThrottleFrom(normalizeAdaptiveThrottleOptions(options));
}

/**
 * {@link createAdaptiveThrottle} over options `normalizeAdaptiveThrottleOptions()` already validated
 * (a dependency's `throttle`, validated with the rest of its options): no second pass.
 */
export function adaptiveThrottleFrom(options: NormalizedAdaptiveThrottleOptions): AdaptiveThrottle {
  const { k, windowMs, bucketCount, countRejected } = options;
  const slotMs = windowMs / bucketCount;
  const requestsBySlot = new Float64Array(bucketCount);
  const acceptsBySlot = new Float64Array(bucketCount);
  let requests = 0;
  let accepts = 0;
  let head = Number.NaN; // absolute index of the newest slot
  // Its position in the ring (`head % bucketCount`, kept: an epoch-ms index is beyond V8's small
  // integers, and the remainder of two doubles is a library call of tens of ns on every record).
  let headSlot = 0;
  let last = 0;

  /** Moves the window to `nowMs` and returns the ring position of its slot. */
  const at = (nowMs: number): number => {
    // Time never runs backwards inside the window; NaN or ±Infinity holds the last sane instant.
    const now = nowMs >= last && nowMs <= Number.MAX_VALUE ? nowMs : last;
    last = now;
    const index = Math.floor(now / slotMs);
    if (index !== head) {
      if (index - head < bucketCount) {
        for (let i = head + 1; i <= index; i++) {
          const slot = i % bucketCount;
          requests -= requestsBySlot[slot]!;
          accepts -= acceptsBySlot[slot]!;
          requestsBySlot[slot] = 0;
          acceptsBySlot[slot] = 0;
        }
      } else {
        requestsBySlot.fill(0);
        acceptsBySlot.fill(0);
        requests = 0;
        accepts = 0;
      }
      head = index;
      headSlot = index % bucketCount;
    }
    return headSlot;
  };
  const probability = (nowMs: number): number => {
    at(nowMs);
    const p = (requests - k * accepts) / (requests + 1);
    return Math.max(p, 0);
  };

  return {
    probability,
    reject(nowMs, random) {
      // The common case, the dependency accepting: one comparison after moving the window.
      if (requests <= k * accepts && Math.floor(nowMs / slotMs) === head) return 0;
      const p = probability(nowMs);
      if (random >= p) return 0;
      if (countRejected) {
        const slot = at(nowMs);
        requestsBySlot[slot]! += 1;
        requests += 1;
      }
      return p;
    },
    record(accepted, nowMs) {
      const slot = at(nowMs);
      requestsBySlot[slot]! += 1;
      requests += 1;
      if (accepted) {
        acceptsBySlot[slot]! += 1;
        accepts += 1;
      }
    },
    state(nowMs) {
      const p = probability(nowMs);
      return { requests, accepts, probability: p };
    },
  };
}
