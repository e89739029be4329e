import { InvalidOptionError } from '../errors.js';
import type { BalancerOptions, NormalizedBalancerOptions } from './balancer-options.js';
import { normalizeBalancerOptions } from './balancer-options.js';
import type { IndexSet } from './index-set.js';
import type { InstanceOutcome } from './instance-outcome.js';
import { CLEAN_RUN_CAP, InstanceTable, SLOT } from './instance-table.js';
import type { InstanceState, InstanceTransition, TransitionReason } from './instance-transition.js';
import { FAR_FACTOR, recordFloor } from './latency-floor.js';
import { failuresIn, pushOutcome } from './outcome-ring.js';
import { ejectionMs, inPanic, isFailureOutlier, maxEjected } from './outlier-rules.js';
import { nextPeakEwma, peakEwmaAt } from './peak-ewma.js';
import { slowStartShare } from './slow-start.js';

/**
 * Cost of an instance with calls in flight whose latency is unknown (no sample yet) or stale (no
 * answer for `decayMs × ln 2`, so the estimate has decayed to less than half): above any real cost,
 * so it gets one exploratory call at a time until an answer says how fast it is now. Finagle's
 * peak-EWMA balancer treats unmeasured nodes this way; prazo extends it to stale estimates, or an
 * idle slow instance whose estimate has decayed would take a burst of calls before its first
 * answer comes back.
 */
const UNKNOWN_PENALTY = 1e15;

/** Random draws tried before a linear scan finds an acceptable candidate (rare: see `#draw`). */
const DRAWS = 8;

/** A timed-out attempt enters the latency estimate at this multiple of its duration (see `finished`). */
const TIMEOUT_SAMPLE_FACTOR = 2;

export type { InstanceState, InstanceTransition, TransitionReason } from './instance-transition.js';

const STATE_NAMES: readonly (InstanceState | undefined)[] = [
  undefined,
  'up',
  'down',
  'ejected',
  'probing',
  'draining',
];

/** One instance in a {@link BalancerSnapshot}. */
export interface InstanceSnapshot {
  origin: string;
  /** Index the balancer's picks return for this instance. */
  index: number;
  /**
   * `up`: takes calls (in slow start while `slowStartShare` < 1); `down`: its connect failed in
   * the last `connectDownMs`; `ejected`: an outlier, out until `untilMs`; `probing`: its ejection
   * ended and one call (the probe) decides whether it returns; `draining`: removed from the fleet,
   * finishing its calls in flight.
   */
  state: InstanceState;
  /** Peak-EWMA of latency now, ms; undefined before its first answer. */
  ewmaMs: number | undefined;
  inFlight: number;
  /** Share of the calls picked over the last one to two share windows (0 … 1). */
  share: number;
  /** Largest share of the picks it would win that it may take now (1 outside slow start). */
  slowStartShare: number;
  timesEjected: number;
  /** End of the ejection or of the connect-down period (epoch ms), else undefined. */
  untilMs: number | undefined;
  /** Failures among its recent outcomes (0 … 1). */
  recentFailureRatio: number;
  /**
   * How much farther than the nearest instance it is, ms (`Balancer.distanceMs`: its latency floor
   * above the fleet's lowest, once at least 3 times it; else 0).
   */
  distanceMs: number;
}

/** What {@link Balancer.snapshot} returns. */
export interface BalancerSnapshot {
  /** Too few instances up: ejection is ignored and load is spread (see `panicThreshold`). */
  panic: boolean;
  instances: InstanceSnapshot[];
}

/** What {@link Balancer.remove} did. */
export type RemoveResult = 'removed' | 'draining' | 'unknown';

/**
 * Chooses the instance of each attempt among the instances of one dependency: power of two choices
 * over peak-EWMA × (in flight + 1), outlier ejection with a single probe, slow start, panic mode
 * and membership changes. Pure policy: no timers, no I/O; the caller passes the time (`nowMs`) to
 * every method and the random source once, in the options.
 *
 * Contract: every pick that returns an index ≥ 0 counts as a call in flight on that instance and
 * must be matched by exactly one {@link Balancer.finished} with the same index.
 *
 * Cost: a pick is O(1) and allocates no object (one random draw, two costs); O(n) work happens only
 * when an ejection or a connect-down period ends, or when most instances are unavailable.
 *
 * @see docs/instances.md (algorithm, defaults and sources).
 * @example
 * const balancer = createBalancer(['http://10.0.0.1:8080', 'http://10.0.0.2:8080'], { random });
 * const i = balancer.pick(clock.now());
 * // … send to balancer.origin(i), then:
 * balancer.finished(i, instanceOutcomeOfStatus(status), elapsedMs, clock.now());
 */
export class Balancer {
  readonly #t = new InstanceTable();
  readonly #o: NormalizedBalancerOptions;
  readonly #random: () => number;
  /** Time without an answer after which an instance's estimate is stale (it has halved). */
  readonly #staleMs: number;
  /** Members ejected or probing. */
  #ejected = 0;
  /** Earliest end of an ejection or connect-down period; the next pick at or after it sweeps. */
  #nextExpiry = Number.POSITIVE_INFINITY;
  /** Instances whose ejection ended and whose probe is not out yet (stale entries are skipped). */
  readonly #probes: number[] = [];
  #epoch = Number.NEGATIVE_INFINITY;
  #picksNow = 0;
  #picksBefore = 0;
  /** Failures and outcomes held in every member's ring, for the peers' ratio. */
  #ringFailures = 0;
  #ringOutcomes = 0;
  /** The lowest latency floor among the members (see `distanceMs`), and whose it is (-1: none yet). */
  #floorMin = 0;
  #floorMinAt = -1;
  /** The lowest floor must be looked for again: its instance's floor rose, or it left the fleet. */
  #floorMinStale = false;

  /**
   * @param origins - the starting instances, keyed by origin (any non-empty string; duplicates are
   *   kept once). They start at full share: slow start is for instances that return or join.
   * @param options - validated by `normalizeBalancerOptions()` ({@link createBalancer} validates
   *   what it is given; a dependency's options were validated with the rest of them).
   * @throws {InvalidOptionError} for origins that are not non-empty strings.
   */
  constructor(origins: readonly string[], options: NormalizedBalancerOptions) {
    this.#o = options;
    this.#random = this.#o.random;
    this.#staleMs = this.#o.decayMs * Math.LN2;
    checkOrigins(origins);
    for (const origin of origins) if (!this.#t.byOrigin.has(origin)) this.#join(origin, 0, true);
  }

  /** Instances in the fleet (draining ones excluded). */
  get size(): number {
    return this.#t.members.size;
  }

  /** Origin of instance `index`, undefined for a free slot. */
  origin(index: number): string | undefined {
    return this.#t.origins[index];
  }

  /** Index of `origin` (also while it drains), or -1. */
  indexOf(origin: string): number {
    return this.#t.byOrigin.get(origin) ?? -1;
  }

  /**
   * The instance for a first attempt: the probe of an instance whose ejection just ended if one is
   * waiting, else the cheaper of two random instances that are up. With no instance up it still
   * answers (the least recently failed), since the deadline, not the balancer, decides when to
   * stop. -1 only when the fleet is empty.
   */
  /**
   * How much farther than the nearest instance the instance of `origin` is, in ms: its latency
   * floor (see latency-floor.ts) above the lowest floor among the members. 0 for the nearest, for
   * an instance without an answer yet, and for an origin that is not in the fleet. A latency the
   * fleet's quickest answers do not share — a longer network path, a slower machine — is this
   * instance's to carry; a concurrency limit that judges the dependency's queue subtracts it from
   * the round trips it samples (`src/engine/steps/overload-step.ts`), so that one instance's
   * distance does not pass for a queue the whole dependency has.
   */
  distanceMs(origin: string): number {
    const t = this.#t;
    const i = t.byOrigin.get(origin);
    if (i === undefined || t.floorCount[i] === 0) return 0;
    if (this.#floorMinStale) this.#findFloorMin();
    const floor = t.floorMs[i]!;
    return floor >= FAR_FACTOR * this.#floorMin ? floor - this.#floorMin : 0;
  }

  pick(nowMs: number): number {
    if (nowMs >= this.#nextExpiry) this.#sweep(nowMs);
    const t = this.#t;
    while (this.#probes.length > 0) {
      const p = this.#probes.pop()!;
      if (t.state[p] === SLOT.probing && t.probeInFlight[p] === 0) {
        t.probeInFlight[p] = 1;
        return this.#start(p, nowMs);
      }
    }
    const i = this.#choose(-1, nowMs);
    return this.#start(i >= 0 ? i : this.#leastRecentlyFailed(), nowMs);
  }

  /**
   * The instance for a retry (or a requeue) of a call whose attempts failed on `failed` (oldest
   * first; empty: none), in this order of preference: an instance that is up and not in `failed`
   * (cheaper of two) › one that is up and is not the last to fail › the last to fail, if it is up ›
   * the least recently failed of the ejected and down ones. Never an instance known to refuse
   * connections while another is up. -1 only when the fleet is empty.
   */
  pickRetry(failed: readonly number[], nowMs: number): number {
    if (nowMs >= this.#nextExpiry) this.#sweep(nowMs);
    const last = failed.length === 0 ? -1 : failed[failed.length - 1]!;
    let i = failed.length <= 1 ? -1 : this.#chooseNotIn(failed, nowMs);
    if (i < 0) i = this.#choose(last, nowMs);
    if (i < 0 && this.#acceptable(last)) i = last;
    return this.#start(i >= 0 ? i : this.#leastRecentlyFailed(), nowMs);
  }

  /**
   * The instance of `origin` again, for a retry that must go back to it (a keyed write whose key
   * only that instance remembers), whatever its state — it is where the first execution ran — while
   * it is in the fleet or draining; -1 once it has left: then it is `pickRetry`'s to choose.
   */
  pickAgain(origin: string, nowMs: number): number {
    const i = this.indexOf(origin);
    return i < 0 ? -1 : this.#start(i, nowMs);
  }

  /**
   * The instance for a hedge copy of a call whose first copy went to `first`: another instance that
   * is up, by the same cost; -1 when there is none (a copy sent to the instance that is slow now
   * would wait behind the same pause and only spend budget).
   */
  pickHedge(first: number, nowMs: number): number {
    if (nowMs >= this.#nextExpiry) this.#sweep(nowMs);
    return this.#start(this.#choose(first, nowMs), nowMs);
  }

  /**
   * Records the end of a call picked on instance `index`: its outcome (see `InstanceOutcome`) and
   * its latency in ms (a sample for `'success'` and `'timeout'`, ignored otherwise).
   *
   * @returns true when this was the last call of a draining instance: its slot is released and the
   *   caller may close what it holds for that origin.
   */
  finished(index: number, outcome: InstanceOutcome, latencyMs: number, nowMs: number): boolean {
    const t = this.#t;
    if (!(index >= 0 && index < t.highWater) || t.state[index] === SLOT.free) return false;
    if (t.inFlight[index]! > 0) t.inFlight[index]!--;
    const state = t.state[index];
    if (state === SLOT.draining) {
      if (t.inFlight[index] !== 0) return false;
      const origin = t.origins[index];
      t.release(index);
      this.#emit(index, SLOT.draining, SLOT.free, 'drained', nowMs, origin);
      return true;
    }
    if (outcome === 'success') {
      this.#sample(index, latencyMs, nowMs);
      this.#floor(index, latencyMs);
    }
    // A timed-out attempt would have taken longer than it was allowed, by how much nobody knows:
    // taken at its timeout it would make an instance that times out half the time look no slower
    // than the timeout. Twice the timeout makes it look as slow as it is to the calls it strands.
    else if (outcome === 'timeout') this.#sample(index, latencyMs * TIMEOUT_SAMPLE_FACTOR, nowMs);
    // Answers to calls sent before the ejection say nothing about the instance now.
    if (state === SLOT.ejected) return false;
    if (state === SLOT.probing) {
      this.#probeAnswered(index, outcome, nowMs - latencyMs, nowMs);
      return false;
    }
    if (outcome === 'neutral') return false;
    if (outcome === 'success') {
      t.consecutive[index] = 0;
      if (t.cleanRun[index]! < CLEAN_RUN_CAP) t.cleanRun[index]!++;
      this.#push(index, false, nowMs);
      if (state === SLOT.down) {
        this.#setUp(index);
        this.#emit(index, SLOT.down, SLOT.up, 'answered', nowMs);
      }
      return false;
    }
    this.#push(index, true, nowMs);
    t.lastFailureAt[index] = nowMs;
    t.cleanRun[index] = 0;
    if (outcome !== 'error') t.consecutive[index]!++;
    const reason: TransitionReason | undefined =
      t.consecutive[index]! >= this.#o.consecutiveFailures && this.#anotherAnswersCleanly(index)
        ? 'consecutive-failures'
        : this.#isRatioOutlier(index)
          ? 'failure-ratio'
          : undefined;
    if (reason !== undefined && this.#eject(index, reason, nowMs)) return false;
    if (outcome === 'refused') this.#markDown(index, nowMs);
    return false;
  }

  /**
   * Adds `origin` to the fleet, in slow start; an origin that is draining comes back (its calls in
   * flight kept). The state of the other instances is untouched.
   * @returns its index.
   * @throws {InvalidOptionError} when `origin` is not a non-empty string.
   */
  add(origin: string, nowMs: number): number {
    if (typeof origin !== 'string' || origin === '')
      throw new InvalidOptionError('origin', 'a non-empty string', origin);
    const t = this.#t;
    const existing = t.byOrigin.get(origin);
    if (existing === undefined) return this.#join(origin, nowMs, false);
    if (t.state[existing] === SLOT.draining) {
      t.state[existing] = SLOT.up;
      t.consecutive[existing] = 0;
      t.members.add(existing);
      t.up.add(existing);
      this.#startSlow(existing, nowMs);
      this.#emit(existing, SLOT.draining, SLOT.up, 'added', nowMs);
    }
    return existing;
  }

  /**
   * Removes `origin` from the fleet: it gets no new calls; if calls are in flight it drains (its
   * index stays valid until the last one is {@link Balancer.finished}), else its slot is released
   * at once. The state of the other instances is untouched.
   */
  remove(origin: string, nowMs: number): RemoveResult {
    const t = this.#t;
    const i = t.byOrigin.get(origin);
    if (i === undefined) return 'unknown';
    const state = t.state[i];
    if (state === SLOT.draining) return 'draining';
    t.members.remove(i);
    t.up.remove(i);
    if (i === this.#floorMinAt) this.#floorMinStale = true;
    if (state === SLOT.ejected || state === SLOT.probing) this.#ejected--;
    this.#clearRing(i);
    t.slow[i] = 0;
    t.probeInFlight[i] = 0;
    if (t.inFlight[i] === 0) {
      t.release(i);
      this.#emit(i, state!, SLOT.free, 'removed', nowMs, origin);
      return 'removed';
    }
    t.state[i] = SLOT.draining;
    this.#emit(i, state!, SLOT.draining, 'removed', nowMs);
    return 'draining';
  }

  /**
   * Makes the fleet `origins`: adds the new ones (slow start), removes the missing ones (draining),
   * leaves the others as they are. The first set given to an empty fleet (a resolver's first answer)
   * starts as the constructor's does, without slow start: there is no peer to ramp up beside.
   * @throws {InvalidOptionError} for origins that are not non-empty strings.
   */
  setOrigins(origins: readonly string[], nowMs: number): { added: string[]; removed: string[] } {
    checkOrigins(origins);
    const t = this.#t;
    if (t.byOrigin.size === 0) {
      for (const origin of origins) if (!t.byOrigin.has(origin)) this.#join(origin, nowMs, true);
      return { added: [...new Set(origins)], removed: [] };
    }
    const wanted = new Set(origins);
    const removed: string[] = [];
    const added: string[] = [];
    for (const [origin, i] of [...t.byOrigin]) {
      if (t.state[i] !== SLOT.draining && !wanted.has(origin)) {
        this.remove(origin, nowMs);
        removed.push(origin);
      }
    }
    for (const origin of wanted) {
      const i = t.byOrigin.get(origin);
      if (i === undefined || t.state[i] === SLOT.draining) {
        this.add(origin, nowMs);
        added.push(origin);
      }
    }
    return { added, removed };
  }

  /** The state of every instance, draining ones included (for `dependency.instances()`). */
  snapshot(nowMs: number): BalancerSnapshot {
    if (nowMs >= this.#nextExpiry) this.#sweep(nowMs);
    this.#rotate(nowMs);
    const t = this.#t;
    const total = this.#picksNow + this.#picksBefore;
    const instances: InstanceSnapshot[] = [];
    for (let i = 0; i < t.highWater; i++) {
      const state = STATE_NAMES[t.state[i]!];
      if (state === undefined) continue;
      const count = t.ringCount[i]!;
      instances.push({
        origin: t.origins[i]!,
        index: i,
        state,
        ewmaMs:
          t.sampled[i] === 1 ? peakEwmaAt(t.ewmaMs[i]!, t.ewmaAt[i]!, nowMs, this.#o.decayMs) : undefined,
        inFlight: t.inFlight[i]!,
        share: total > 0 ? (t.picksNow[i]! + t.picksBefore[i]!) / total : 0,
        slowStartShare: t.slow[i] === 1 ? this.#slowShare(i, nowMs) : 1,
        timesEjected: t.timesEjected[i]!,
        untilMs: state === 'ejected' || state === 'down' ? t.until[i]! : undefined,
        recentFailureRatio: count > 0 ? failuresIn(t.ring[i]!) / count : 0,
        distanceMs: this.distanceMs(t.origins[i]!),
      });
    }
    return { panic: this.#panic(), instances };
  }

  /** Reports a change of state of instance `i` (already applied) to `onTransition`. */
  #emit(i: number, from: number, to: number, reason: TransitionReason, nowMs: number, origin?: string): void {
    const listener = this.#o.onTransition;
    if (listener === undefined) return;
    const t = this.#t;
    const transition: InstanceTransition = {
      origin: origin ?? t.origins[i]!,
      index: i,
      from: STATE_NAMES[from] ?? 'absent',
      to: STATE_NAMES[to] ?? 'absent',
      reason,
      atMs: nowMs,
      timesEjected: t.timesEjected[i]!,
      untilMs: to === SLOT.ejected || to === SLOT.down ? t.until[i]! : undefined,
    };
    try {
      listener(transition);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  #panic(): boolean {
    const t = this.#t;
    return inPanic(t.up.size, t.members.size, this.#o.panicThreshold);
  }

  /**
   * Cheaper of two random acceptable instances other than `exclude`, slow start applied; -1 if none.
   *
   * One random number usually serves the whole choice: the first candidate is `floor(u × n)` and
   * the fraction left over, `u × n − floor(u × n)`, is again uniform and independent of it, so it
   * draws the second candidate, and what is left after that settles a tie and the slow-start draw.
   * Each call of the random source returns a new heap number (V8 cannot inline a function held in
   * a field), so one call per pick instead of three is most of the difference in allocation.
   */
  #choose(exclude: number, nowMs: number): number {
    const t = this.#t;
    if (t.members.size === 0) return -1;
    const panic = this.#panic();
    const set = panic ? t.members : t.up;
    const n = set.size;
    let u = this.#random();
    const a = this.#draw(set, exclude, -1, panic, u);
    if (a < 0) return -1;
    u = u * n - Math.floor(u * n);
    const b = this.#draw(set, exclude, a, panic, u);
    if (b < 0) return a;
    u = u * n - Math.floor(u * n);
    return this.#cheaper(a, b, u, nowMs);
  }

  /**
   * The cheaper of `a` and `b` (a tie broken by `u`), unless the winner is in slow start and `u`
   * falls beyond its current share: it keeps only that share of the picks it wins.
   */
  #cheaper(a: number, b: number, u: number, nowMs: number): number {
    const t = this.#t;
    const costA = this.#cost(a, nowMs);
    const costB = this.#cost(b, nowMs);
    let win = a;
    let lose = b;
    if (costB === costA) {
      if (u < 0.5) {
        win = b;
        lose = a;
      }
      u = u * 2 - Math.floor(u * 2);
    } else if (costB < costA) {
      win = b;
      lose = a;
    }
    if (t.slow[win] === 1 && u >= this.#slowShare(win, nowMs)) return lose;
    return win;
  }

  /**
   * Like `#choose`, among the candidates that are not in `not` (a call's failed instances: a short
   * list, and a path taken only by a call's third try or later).
   */
  #chooseNotIn(not: readonly number[], nowMs: number): number {
    const t = this.#t;
    const panic = this.#panic();
    const set = panic ? t.members : t.up;
    const items = set.items;
    const left: number[] = [];
    for (let k = 0; k < set.size; k++) {
      const i = items[k]!;
      if (!not.includes(i) && !(panic && t.state[i] === SLOT.down)) left.push(i);
    }
    const n = left.length;
    if (n <= 1) return n === 0 ? -1 : left[0]!;
    const ka = (this.#random() * n) | 0;
    let kb = (this.#random() * (n - 1)) | 0;
    if (kb >= ka) kb++;
    return this.#cheaper(left[ka]!, left[kb]!, this.#random(), nowMs);
  }

  /**
   * A uniformly random member of `set` other than `not1` and `not2` (and, in panic, not down), or
   * -1; the first try uses `u`. Random draws find one almost always (at least half of a set
   * qualifies but in tiny fleets); a scan settles the rest.
   */
  #draw(set: IndexSet, not1: number, not2: number, panic: boolean, u: number): number {
    const n = set.size;
    if (n === 0) return -1;
    const items = set.items;
    const state = this.#t.state;
    if (n === 1) {
      const i = items[0]!;
      return i !== not1 && i !== not2 && !(panic && state[i] === SLOT.down) ? i : -1;
    }
    for (let k = 0; k < DRAWS; k++) {
      const i = items[((k === 0 ? u : this.#random()) * n) | 0]!;
      if (i !== not1 && i !== not2 && !(panic && state[i] === SLOT.down)) return i;
    }
    let count = 0;
    for (let k = 0; k < n; k++) {
      const i = items[k]!;
      if (i !== not1 && i !== not2 && !(panic && state[i] === SLOT.down)) count++;
    }
    if (count === 0) return -1;
    let r = (this.#random() * count) | 0;
    for (let k = 0; k < n; k++) {
      const i = items[k]!;
      if (i !== not1 && i !== not2 && !(panic && state[i] === SLOT.down) && r-- === 0) return i;
    }
    return -1;
  }

  #cost(i: number, nowMs: number): number {
    const t = this.#t;
    const n = t.inFlight[i]!;
    if (t.sampled[i] === 0) return n === 0 ? 0 : UNKNOWN_PENALTY + n;
    if (n > 0 && nowMs - t.ewmaAt[i]! > this.#staleMs) return UNKNOWN_PENALTY + n;
    return peakEwmaAt(t.ewmaMs[i]!, t.ewmaAt[i]!, nowMs, this.#o.decayMs) * (n + 1);
  }

  #slowShare(i: number, nowMs: number): number {
    const t = this.#t;
    const share = slowStartShare(nowMs - t.slowSince[i]!, this.#o.slowStartMs, this.#o.slowStartMinShare);
    if (share >= 1) t.slow[i] = 0;
    return share;
  }

  #acceptable(i: number): boolean {
    const t = this.#t;
    if (!t.members.has(i)) return false;
    return t.state[i] === SLOT.up || (this.#panic() && t.state[i] !== SLOT.down);
  }

  /** The member that failed longest ago (never-failed first), or -1 with no member. */
  #leastRecentlyFailed(): number {
    const t = this.#t;
    const items = t.members.items;
    let best = -1;
    for (let k = 0; k < t.members.size; k++) {
      const i = items[k]!;
      if (best === -1 || t.lastFailureAt[i]! < t.lastFailureAt[best]!) best = i;
    }
    return best;
  }

  #start(i: number, nowMs: number): number {
    if (i < 0) return i;
    const t = this.#t;
    t.inFlight[i]!++;
    this.#rotate(nowMs);
    t.picksNow[i]!++;
    this.#picksNow++;
    return i;
  }

  /** Moves the share counters to the window of `nowMs` (O(n) once per window, O(1) otherwise). */
  #rotate(nowMs: number): void {
    const epoch = Math.floor(nowMs / this.#o.shareWindowMs);
    if (epoch === this.#epoch) return;
    const t = this.#t;
    const next = epoch === this.#epoch + 1;
    for (let i = 0; i < t.highWater; i++) {
      t.picksBefore[i] = next ? t.picksNow[i]! : 0;
      t.picksNow[i] = 0;
    }
    this.#picksBefore = next ? this.#picksNow : 0;
    this.#picksNow = 0;
    this.#epoch = epoch;
  }

  #sample(i: number, latencyMs: number, nowMs: number): void {
    if (!(latencyMs >= 0 && latencyMs < Number.POSITIVE_INFINITY)) return;
    const t = this.#t;
    if (t.sampled[i] === 0) {
      t.ewmaMs[i] = latencyMs;
      t.sampled[i] = 1;
    } else {
      t.ewmaMs[i] = nextPeakEwma(t.ewmaMs[i]!, t.ewmaAt[i]!, latencyMs, nowMs, this.#o.decayMs);
    }
    t.ewmaAt[i] = nowMs;
  }

  /** A successful answer's latency moves the instance's floor (a timed-out one says only "at least"). */
  #floor(i: number, latencyMs: number): void {
    if (!(latencyMs >= 0 && latencyMs < Number.POSITIVE_INFINITY)) return;
    const t = this.#t;
    const before = t.floorCount[i] === 0 ? Number.POSITIVE_INFINITY : t.floorMs[i]!;
    const floor = recordFloor(t.floorRing, t.floorCount, i, latencyMs);
    t.floorMs[i] = floor;
    if (this.#floorMinAt === -1 || floor < this.#floorMin) {
      this.#floorMin = floor;
      this.#floorMinAt = i;
    } else if (i === this.#floorMinAt && floor > before) this.#floorMinStale = true;
  }

  /** Looks for the lowest floor among the members (O(n): after the lowest one rose or left). */
  #findFloorMin(): void {
    const t = this.#t;
    const items = t.members.items;
    this.#floorMinAt = -1;
    for (let k = 0; k < t.members.size; k++) {
      const i = items[k]!;
      if (t.floorCount[i]! > 0 && (this.#floorMinAt === -1 || t.floorMs[i]! < this.#floorMin)) {
        this.#floorMin = t.floorMs[i]!;
        this.#floorMinAt = i;
      }
    }
    this.#floorMinStale = false;
  }

  #push(i: number, failed: boolean, nowMs: number): void {
    const t = this.#t;
    if (nowMs - t.lastOutcomeAt[i]! > this.#o.failureWindowMs) this.#clearRing(i);
    t.lastOutcomeAt[i] = nowMs;
    const size = this.#o.failureWindowRequests;
    const before = failuresIn(t.ring[i]!);
    t.ring[i] = pushOutcome(t.ring[i]!, failed, size);
    this.#ringFailures += failuresIn(t.ring[i]!) - before;
    if (t.ringCount[i]! < size) {
      t.ringCount[i]!++;
      this.#ringOutcomes++;
    }
  }

  #clearRing(i: number): void {
    const t = this.#t;
    this.#ringFailures -= failuresIn(t.ring[i]!);
    this.#ringOutcomes -= t.ringCount[i]!;
    t.ring[i] = 0;
    t.ringCount[i] = 0;
  }

  #isRatioOutlier(i: number): boolean {
    const t = this.#t;
    const count = t.ringCount[i]!;
    if (count < this.#o.failureWindowRequests) return false;
    const failures = failuresIn(t.ring[i]!);
    return isFailureOutlier(
      failures,
      count,
      this.#ringFailures - failures,
      this.#ringOutcomes - count,
      this.#o.failureRatio,
      this.#o.failureRatioOverPeers,
    );
  }

  /** Ejects instance `i` (up or down) unless too many are out already; whether it did. */
  #eject(i: number, reason: TransitionReason, nowMs: number): boolean {
    const t = this.#t;
    if (this.#ejected >= maxEjected(t.members.size, this.#o.maxEjectionFraction)) return false;
    const from = t.state[i]!;
    if (nowMs - t.returnedAt[i]! >= this.#o.maxEjectionMs) t.timesEjected[i] = 0;
    t.up.remove(i);
    t.state[i] = SLOT.ejected;
    this.#ejected++;
    this.#ejectFor(i, nowMs);
    this.#clearRing(i);
    t.consecutive[i] = 0;
    t.cleanRun[i] = 0;
    t.slow[i] = 0;
    this.#emit(i, from, SLOT.ejected, reason, nowMs);
    return true;
  }

  /** Starts the next ejection period of instance `i` (ejected or probing): base × times, capped. */
  #ejectFor(i: number, nowMs: number): void {
    const t = this.#t;
    t.timesEjected[i]!++;
    t.state[i] = SLOT.ejected;
    t.probeInFlight[i] = 0;
    const until = nowMs + ejectionMs(t.timesEjected[i]!, this.#o.baseEjectionMs, this.#o.maxEjectionMs);
    t.until[i] = until;
    if (until < this.#nextExpiry) this.#nextExpiry = until;
  }

  /** The probe sent to instance `i` at `sentMs` ended with `outcome` at `nowMs`. */
  #probeAnswered(i: number, outcome: InstanceOutcome, sentMs: number, nowMs: number): void {
    const t = this.#t;
    t.probeInFlight[i] = 0;
    if (outcome === 'neutral') {
      this.#probes.push(i);
      return;
    }
    const failed = outcome !== 'success';
    if (failed) {
      t.lastFailureAt[i] = nowMs;
      if (this.#anotherAnswersCleanly(i, sentMs) && !this.#peersFailOften(i)) {
        this.#ejectFor(i, nowMs);
        this.#emit(i, SLOT.probing, SLOT.ejected, 'probe-failed', nowMs);
        return;
      }
    }
    this.#ejected--;
    this.#setUp(i);
    t.returnedAt[i] = nowMs;
    t.consecutive[i] = 0;
    t.cleanRun[i] = failed ? 0 : 1;
    this.#startSlow(i, nowMs);
    this.#emit(i, SLOT.probing, SLOT.up, failed ? 'fleet-failing' : 'probe-succeeded', nowMs);
  }

  /**
   * Whether another instance that is up answered its last `consecutiveFailures` calls without a
   * failure (or has no failure on record) — and, for a probe (`sinceMs`), answered since the probe
   * was sent. Ejecting moves an instance's load onto the others: worth it only while one of them is
   * doing better. When every instance fails alike (a fleet-wide error burst, a shared dependency
   * down), failures in a row say nothing about the one instance, and ejecting it would leave the
   * fleet with fewer instances — and a hedge with nowhere to go — once the burst ends. A probe is
   * judged against what the others do while it is out, not against clean runs from before an
   * outage in which their calls only ran out of time (outcomes that change no run): in the drill,
   * a probe reset when the whole degraded fleet restarted re-ejected its instance for 20 s on clean
   * runs 20 s old, and the error burst that followed ran on two instances of three.
   */
  #anotherAnswersCleanly(i: number, sinceMs = Number.NEGATIVE_INFINITY): boolean {
    const t = this.#t;
    const items = t.up.items;
    const need = this.#o.consecutiveFailures;
    for (let k = 0; k < t.up.size; k++) {
      const j = items[k]!;
      if (j !== i && t.cleanRun[j]! >= need && t.lastOutcomeAt[j]! >= sinceMs) return true;
    }
    return false;
  }

  /**
   * Whether the other instances, taken together, failed at least `failureRatio ÷
   * failureRatioOverPeers` of their recent calls (the share the ratio rule would not call an outlier
   * against): one failed probe is then what any instance would answer, and says nothing of this
   * one. Without it, in a fleet-wide error burst a probe fails as often as the burst's share, and
   * one peer's few clean answers in a row re-eject the instance for twice as long — a fleet with a
   * third of its capacity out for the whole burst.
   */
  #peersFailOften(i: number): boolean {
    const t = this.#t;
    const outcomes = this.#ringOutcomes - t.ringCount[i]!;
    if (outcomes <= 0) return false;
    const failures = this.#ringFailures - failuresIn(t.ring[i]!);
    return failures / outcomes >= this.#o.failureRatio / this.#o.failureRatioOverPeers;
  }

  #markDown(i: number, nowMs: number): void {
    const t = this.#t;
    if (this.#o.connectDownMs <= 0) return;
    const until = nowMs + this.#o.connectDownMs;
    t.until[i] = until;
    if (until < this.#nextExpiry) this.#nextExpiry = until;
    if (t.state[i] === SLOT.up) {
      t.up.remove(i);
      t.state[i] = SLOT.down;
      this.#emit(i, SLOT.up, SLOT.down, 'connect-failure', nowMs);
    }
  }

  #setUp(i: number): void {
    this.#t.state[i] = SLOT.up;
    this.#t.up.add(i);
  }

  #startSlow(i: number, nowMs: number): void {
    if (this.#o.slowStartMs <= 0) return;
    this.#t.slow[i] = 1;
    this.#t.slowSince[i] = nowMs;
  }

  /** A new instance, up; in slow start and reported unless it is one of the starting ones. */
  #join(origin: string, nowMs: number, initial: boolean): number {
    const t = this.#t;
    const i = t.allocate(origin);
    t.members.add(i);
    t.up.add(i);
    if (initial) return i;
    this.#startSlow(i, nowMs);
    this.#emit(i, SLOT.free, SLOT.up, 'added', nowMs);
    return i;
  }

  /** Ends the ejections and connect-down periods due by `nowMs`; finds the next one. */
  #sweep(nowMs: number): void {
    const t = this.#t;
    let next = Number.POSITIVE_INFINITY;
    const items = t.members.items;
    for (let k = 0; k < t.members.size; k++) {
      const i = items[k]!;
      const state = t.state[i];
      if (state !== SLOT.ejected && state !== SLOT.down) continue;
      const until = t.until[i]!;
      if (until > nowMs) {
        if (until < next) next = until;
      } else if (state === SLOT.ejected) {
        t.state[i] = SLOT.probing;
        t.probeInFlight[i] = 0;
        this.#probes.push(i);
        this.#emit(i, SLOT.ejected, SLOT.probing, 'ejection-ended', nowMs);
      } else {
        this.#setUp(i);
        this.#emit(i, SLOT.down, SLOT.up, 'down-ended', nowMs);
      }
    }
    this.#nextExpiry = next;
  }
}

/**
 * Creates a {@link Balancer} over `origins`.
 * @throws {InvalidOptionError} for origins that are not non-empty strings or unusable options.
 */
export function createBalancer(origins: readonly string[], options: BalancerOptions = {}): Balancer {
  return new Balancer(origins, normalizeBalancerOptions(options));
}

function checkOrigins(origins: unknown): asserts origins is readonly string[] {
  if (!Array.isArray(origins)) throw new InvalidOptionError('origins', 'an array of origins', origins);
  origins.forEach((origin, i) => {
    if (typeof origin !== 'string' || origin === '')
      throw new InvalidOptionError(`origins[${i}]`, 'a non-empty string', origin);
  });
}
