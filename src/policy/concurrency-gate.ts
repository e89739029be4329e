import type { CoarseTimer, TimerEntry } from '../coarse-timer.js';
import { InvalidOptionError } from '../errors.js';
import { integerIn } from '../option-checks.js';
import {
  type GradientLimit,
  type GradientLimitOptions,
  type GradientLimitState,
  gradientLimitFrom,
  type NormalizedGradientLimitOptions,
  normalizeGradientLimitOptions,
} from './gradient-limit.js';

/** A call waiting for a slot, as the gate sees it. */
export interface GateWaiter {
  /** Set once it left the queue (granted, timed out or cancelled). */
  readonly done: boolean;
  /**
   * Its slot is taken: it may start. Returns whether it took it: a waiter that can no longer start
   * in time (its turn came after its start-by time, before its timer said so) declines it, and the
   * slot goes to the next waiter.
   */
  grant(): boolean;
}

/**
 * The adaptive concurrency limit of a dependency: the gradient algorithm's options
 * ({@link GradientLimitOptions}) and the wait queue's bound.
 */
export interface ConcurrencyOptions extends GradientLimitOptions {
  /**
   * Calls that may wait for a slot at once; one more fails with `CONCURRENCY_LIMITED` at once. A
   * waiting call also fails as soon as it could no longer start in time for the dependency's p99.
   * @default 1000
   */
  maxQueued?: number;
  /**
   * Which waiting call a freed slot goes to. `'fifo'`: the first come. `'adaptive-lifo'`: the first
   * come while no more calls wait than the limit admits at once, the **last** come while more do —
   * a standing queue (each of its calls would wait at least one latency) is served newest first, so
   * the callers who get an answer get it fast, with the most of their deadline left, and the oldest
   * leave at their start-by time as they would have anyway (docs/overload.md: measured under a
   * steady 3× overload, and where it costs). @default 'fifo'
   */
  order?: 'adaptive-lifo' | 'fifo';
}

/** {@link ConcurrencyOptions} with every default applied. */
export interface NormalizedConcurrencyOptions {
  readonly limit: NormalizedGradientLimitOptions;
  readonly maxQueued: number;
  readonly order: 'adaptive-lifo' | 'fifo';
}

/** Default bound of the wait queue. */
export const CONCURRENCY_MAX_QUEUED_DEFAULT = 1000;

/**
 * Validates {@link ConcurrencyOptions}.
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeConcurrencyOptions(
  options: ConcurrencyOptions,
  optionPath = '',
): NormalizedConcurrencyOptions {
  const given = options.maxQueued;
  const maxQueued = integerIn(
    `${optionPath}maxQueued`,
    given === undefined ? CONCURRENCY_MAX_QUEUED_DEFAULT : given,
    0,
    1_000_000,
  );
  const order = options.order ?? 'fifo';
  if (order !== 'adaptive-lifo' && order !== 'fifo')
    throw new InvalidOptionError(`${optionPath}order`, "'adaptive-lifo' or 'fifo'", order);
  // The limit's own options are read from `options` itself (it reads only its names): no copy.
  return { limit: normalizeGradientLimitOptions(options, optionPath), maxQueued, order };
}

/**
 * A concurrency gate of its own, as `dependency()` makes one per dependency from its `concurrency`
 * option: the gradient limit and the wait queue, without the timer that frees abandoned slots (an
 * abandoned attempt then holds no slot). For a client of your own, or a simulation that must limit
 * as prazo does.
 * @param random the limit's jitter source, `Math.random` by default
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function createConcurrencyGate(
  options: ConcurrencyOptions = {},
  random: () => number = Math.random,
): ConcurrencyGate {
  return new ConcurrencyGate(normalizeConcurrencyOptions(options), random);
}

/** The concurrency limit of a dependency as `dependency.overload()` reports it. */
export interface ConcurrencySnapshot extends GradientLimitState {
  /** Calls holding a slot now (hedge copies included). */
  inFlight: number;
  /**
   * Slots still held by attempts the client abandoned (timed out, cancelled, a losing hedge copy)
   * for as long as the dependency is likely still working on them.
   */
  abandoned: number;
  /** Calls waiting for a slot. */
  queued: number;
}

/**
 * The slots of one dependency and the calls waiting for one. A call holds one slot from its first
 * attempt to its end (its retries run one after another inside it); a hedge copy needs a second
 * slot, taken only when one is free and nobody waits.
 *
 * **Abandoned work holds a slot too.** HTTP/1.1 cannot take back a request the server has queued:
 * an attempt the client gave up on (a timeout, a cancellation, a losing hedge copy) still loads the
 * dependency. Such an attempt keeps a slot (`abandoned`) for about one more latency of the
 * dependency (the limit's live latency, or the time the attempt already went unanswered if longer;
 * at most the read timeout), and a backlog of them frees one slot per latency ÷ limit (the pace at
 * which the dependency serves, by Little's law), so that what the client counts in flight matches
 * what the dependency is working on — but no abandoned slot is held longer than the read timeout
 * from when it was abandoned, so an outage's backlog is gone one read timeout after it.
 */
export class ConcurrencyGate implements TimerEntry {
  inFlight = 0;
  queued = 0;
  /** Slots held by abandoned attempts (see the class). */
  abandoned = 0;
  /** When the oldest abandoned slot frees (the timer's entry). */
  dueAt = 0;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  readonly maxQueued: number;
  readonly #limit: GradientLimit;
  /**
   * The waiters in the order they came, from `#head`; cancelled ones stay until reached (`queued`
   * counts the live ones). Served from the front, or from the back while the queue stands
   * (`order: 'adaptive-lifo'`).
   */
  #waiters: GateWaiter[] = [];
  readonly #lifo: boolean;
  #head = 0;
  #lastLimit: number;
  readonly #onLimit: ((limit: number) => void) | undefined;
  readonly #timer: CoarseTimer | undefined;
  /** When each abandoned slot frees, in the order they were abandoned (a ring from #ghostHead). */
  #ghostUntil: number[] = [];
  /** The instance each abandoned slot's work is on (-1: not said), in the order of #ghostUntil. */
  #ghostOn: number[] = [];
  /** Abandoned slots per instance (by the balancer's index). */
  #abandonedOn: number[] = [];
  #ghostHead = 0;
  #armed = false;
  /**
   * Since when the dependency has had work of this client outstanding (a slot in flight or
   * abandoned) without a break, or the last answer to any attempt if later (epoch ms): the start of
   * its present silence. See {@link ConcurrencyGate.silentForMs}.
   */
  #quietSince = Number.POSITIVE_INFINITY;

  /**
   * @param timer frees the slots of abandoned attempts when they are due; without one, an abandoned
   *   attempt holds no slot.
   */
  constructor(
    options: NormalizedConcurrencyOptions,
    random: () => number,
    onLimit?: (limit: number) => void,
    timer?: CoarseTimer,
  ) {
    this.#limit = gradientLimitFrom(options.limit, random);
    this.maxQueued = options.maxQueued;
    this.#lifo = options.order === 'adaptive-lifo';
    this.#lastLimit = this.#limit.limit();
    this.#onLimit = onLimit;
    this.#timer = timer;
  }

  limit(): number {
    return this.#limit.limit();
  }

  /** The dependency's latency as the limit last measured it (ms), undefined before any. */
  latencyMs(): number | undefined {
    return this.#limit.latencyMs();
  }

  /**
   * Whether the dependency is still working on abandoned attempts beyond the limit, counting
   * `abandoning` attempts about to be abandoned: a retry sent now would only queue behind that work.
   * With `elsewhereThan`, the instance a retry leaves (it goes to another one of the fleet), the
   * work abandoned there is not counted: a retry does not queue behind a hung instance's work on
   * another instance.
   */
  pastLimitWithAbandoned(abandoning = 0, elsewhereThan = -1): boolean {
    let abandoned = this.abandoned + abandoning;
    if (elsewhereThan >= 0) abandoned -= this.#abandonedOn[elsewhereThan] ?? 0;
    return abandoned > 0 && this.inFlight + abandoned > this.#limit.limit();
  }

  /**
   * Takes a slot if one is free and no call waits for one. `nowMs` (epoch ms) starts the count of a
   * silence ({@link ConcurrencyGate.silentForMs}) when the slot is the first outstanding one.
   */
  tryAcquire(nowMs?: number): boolean {
    const outstanding = this.inFlight + this.abandoned;
    if (this.queued !== 0 || outstanding >= this.#limit.limit()) return false;
    if (outstanding === 0 && nowMs !== undefined) this.#quietSince = nowMs;
    this.inFlight++;
    return true;
  }

  /** An attempt got an answer (any status) at `nowMs`: the dependency is not silent. */
  answered(nowMs: number): void {
    if (nowMs > this.#quietSince || this.#quietSince === Number.POSITIVE_INFINITY) this.#quietSince = nowMs;
  }

  /**
   * For how long, at `nowMs`, the dependency has answered none of this client's attempts while it
   * had some outstanding the whole time, ms; 0 while nothing is outstanding. A dependency that
   * answers nothing for a whole read timeout with work in flight (hung, or a network path that drops
   * everything) frees a slot only as that work times out: a call that waits for one holds its
   * caller's resources (a pool slot, a worker) for nothing. The engine then refuses such a call at
   * once (`CONCURRENCY_LIMITED`) rather than let it wait.
   */
  silentForMs(nowMs: number): number {
    if (this.inFlight + this.abandoned === 0) return 0;
    const since = this.#quietSince;
    return since === Number.POSITIVE_INFINITY || nowMs <= since ? 0 : nowMs - since;
  }

  /**
   * An attempt that started at `startedMs` was given up at `nowMs` after `elapsedMs` while the
   * dependency may still be working on it: it keeps a slot for about one more latency (the limit's,
   * or `elapsedMs` if longer; at most `maxHoldMs`). With `timedOut` it ran out of time: a **drop** for the limit (a multiplicative
   * decrease, and `elapsedMs` as a censored latency sample). `instance`, the balancer's index of the
   * instance the work is on, lets {@link ConcurrencyGate.pastLimitWithAbandoned} tell a retry to
   * another instance from one that would queue behind it.
   */
  abandon(
    timedOut: boolean,
    elapsedMs: number,
    startedMs: number,
    nowMs: number,
    maxHoldMs: number,
    instance = -1,
  ): void {
    const limit = this.#limit;
    if (timedOut) {
      limit.drop(elapsedMs, startedMs, nowMs, this.inFlight + this.abandoned);
      this.#limitChanged();
    }
    const timer = this.#timer;
    if (timer === undefined) return;
    // About one more latency: the one the limit measures, or the time this attempt already went
    // unanswered if longer (at the start of an overload the last window's latency is stale).
    const latencyMs = limit.latencyMs() ?? maxHoldMs;
    const holdMs = Math.min(Math.max(latencyMs, elapsedMs), maxHoldMs);
    if (!(holdMs > 0)) return;
    // The dependency works through a backlog of abandoned attempts at its own pace, which by
    // Little's law is about `limit` round trips per latency: one abandoned slot frees no sooner
    // than latency ÷ limit after the one before it.
    const until = this.#ghostUntil;
    const last = until.length > this.#ghostHead ? until[until.length - 1]! : Number.NEGATIVE_INFINITY;
    // Never beyond `maxHoldMs` from now: a backlog paced at the pace of a limit that collapsed
    // during an outage would hold the slots long after it (a hung dependency is restarted, or
    // answers everything at once) — the slots would keep refusing calls to a healthy dependency.
    const due = Math.min(Math.max(nowMs + holdMs, last + latencyMs / limit.limit()), nowMs + maxHoldMs);
    this.abandoned++;
    until.push(due);
    this.#ghostOn.push(instance);
    if (instance >= 0) this.#abandonedOn[instance] = (this.#abandonedOn[instance] ?? 0) + 1;
    if (!this.#armed) {
      this.#armed = true;
      this.dueAt = due;
      timer.add(this);
    }
  }

  /** The timer: frees the abandoned slots that are due and hands them to waiters. */
  onDue(nowMs: number): void {
    this.#armed = false;
    const until = this.#ghostUntil;
    const on = this.#ghostOn;
    while (this.#ghostHead < until.length && until[this.#ghostHead]! <= nowMs) {
      const instance = on[this.#ghostHead++]!;
      if (instance >= 0) this.#abandonedOn[instance]!--;
      this.abandoned--;
    }
    if (this.#ghostHead === until.length) {
      this.#ghostUntil = [];
      this.#ghostOn = [];
      this.#ghostHead = 0;
    } else {
      if (this.#ghostHead > 1024) {
        this.#ghostUntil = until.slice(this.#ghostHead);
        this.#ghostOn = on.slice(this.#ghostHead);
        this.#ghostHead = 0;
      }
      this.#armed = true;
      this.dueAt = this.#ghostUntil[this.#ghostHead]!;
      this.#timer!.add(this);
    }
    this.#grant();
  }

  /**
   * Gives a slot back; `rttMs` (undefined when the outcome says nothing of the dependency's
   * latency) feeds the limit. The slot goes to the first waiter while the limit allows.
   */
  release(rttMs: number | undefined, startedMs: number, nowMs: number, refused = false): void {
    if (refused) this.#limit.refused(nowMs);
    if (rttMs !== undefined) {
      this.#limit.sample(rttMs, startedMs, nowMs, this.inFlight + this.abandoned, this.queued);
      this.#limitChanged();
    }
    this.inFlight--;
    if (this.queued !== 0) this.#grant();
  }

  #grant(): void {
    const limit = this.#limit;
    while (this.queued !== 0 && this.inFlight + this.abandoned < limit.limit()) {
      const waiter = this.#shift();
      this.inFlight++;
      if (!waiter.grant()) this.inFlight--;
    }
  }

  #limitChanged(): void {
    const now = this.#limit.limit();
    if (now !== this.#lastLimit) {
      this.#lastLimit = now;
      this.#onLimit?.(now);
    }
  }

  /** Queues `waiter` (the caller checked `queued < maxQueued`). */
  enqueue(waiter: GateWaiter): void {
    this.#waiters.push(waiter);
    this.queued++;
  }

  /** A waiter left the queue before its turn (timed out, cancelled). */
  leave(): void {
    this.queued--;
    // Only departed waiters are left: drop them rather than keep them until the next release.
    if (this.queued === 0) this.#dropDeparted();
  }

  /**
   * How long a call queued behind `ahead` others can expect to wait, in ms, by Little's law (a slot
   * frees every latency ÷ limit ms on average); 0 before the limit has measured any latency — a
   * prediction from a latency nobody measured yet (a new dependency's first burst, its limit still
   * at the no-load probe's floor) would refuse calls on a guess. The waiting call's own bound (it
   * must start in time for the dependency's latency) still holds. During a no-load probe the pace
   * is the limit's once the probe ends (`GradientLimit.steadyLimit`): judged at the floor's pace, a
   * new dependency's first burst was refused for a wait it would not have had (a service starting
   * at 4 000 calls a second: 80–90 calls in the probe's 50 ms).
   */
  expectedWaitMs(ahead: number): number {
    const limit = this.#limit;
    const latencyMs = limit.latencyMs();
    return latencyMs === undefined ? 0 : ((ahead + 1) * latencyMs) / limit.steadyLimit();
  }

  snapshot(): ConcurrencySnapshot {
    // Field by field: a spread of the limit's state into this object took ≈ 5 µs a read on Node 20
    // (V8's slow path for copying properties), fifty times the rest of `dependency.overload()`.
    const state = this.#limit.state();
    return {
      limit: state.limit,
      estimate: state.estimate,
      noLoadMs: state.noLoadMs,
      rttMs: state.rttMs,
      probing: state.probing,
      slowStart: state.slowStart,
      drops: state.drops,
      probes: state.probes,
      inFlight: this.inFlight,
      abandoned: this.abandoned,
      queued: this.queued,
    };
  }

  #shift(): GateWaiter {
    // A standing queue — more waiting than the limit admits at once, so that each waits at least one
    // latency (Little's law) — is served newest first: adaptive LIFO. `queued` counts live waiters,
    // and the live ones lie from `#head` on: either loop ends.
    if (this.#lifo && this.queued > this.#limit.limit()) {
      for (;;) {
        const waiter = this.#waiters.pop()!;
        if (!waiter.done) {
          this.queued--;
          return waiter;
        }
      }
    }
    for (;;) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head++] = undefined as unknown as GateWaiter;
      if (this.#head > 1024 && this.#head * 2 > this.#waiters.length) {
        this.#waiters = this.#waiters.slice(this.#head);
        this.#head = 0;
      }
      if (!waiter.done) {
        this.queued--;
        // Only departed waiters are left behind it: dropped now, not kept until the next call waits.
        if (this.queued === 0) this.#dropDeparted();
        return waiter;
      }
    }
  }

  /** Forgets the waiters that departed (the queue has no live one left). */
  #dropDeparted(): void {
    this.#waiters = [];
    this.#head = 0;
  }
}
