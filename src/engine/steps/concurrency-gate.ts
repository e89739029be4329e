import { InvalidOptionError } from '../../errors.js';
import {
  createGradientLimit,
  type GradientLimit,
  type GradientLimitOptions,
  type GradientLimitState,
  type NormalizedGradientLimitOptions,
  normalizeGradientLimitOptions,
} from '../../policy/gradient-limit.js';

/** A call waiting for a slot, as the gate sees it. */
export interface GateWaiter {
  /** Set once it left the queue (granted, timed out or cancelled). */
  readonly done: boolean;
  /** Its slot is taken: it may start. */
  grant(): void;
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
}

/** {@link ConcurrencyOptions} with every default applied. */
export interface NormalizedConcurrencyOptions {
  readonly limit: NormalizedGradientLimitOptions;
  readonly maxQueued: number;
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
  const { maxQueued = CONCURRENCY_MAX_QUEUED_DEFAULT, ...limit } = options;
  if (!Number.isInteger(maxQueued) || maxQueued < 0 || maxQueued > 1_000_000)
    throw new InvalidOptionError(`${optionPath}maxQueued`, 'an integer from 0 to 1000000', maxQueued);
  return { limit: normalizeGradientLimitOptions(limit, optionPath), maxQueued };
}

/** The concurrency limit of a dependency as `dependency.overload()` reports it. */
export interface ConcurrencySnapshot extends GradientLimitState {
  /** Calls holding a slot now (hedge copies included). */
  inFlight: number;
  /** Calls waiting for a slot. */
  queued: number;
}

/**
 * The slots of one dependency and the calls waiting for one. A call holds one slot from its first
 * attempt to its end (its retries run one after another inside it); a hedge copy needs a second
 * slot, taken only when one is free and nobody waits.
 */
export class ConcurrencyGate {
  inFlight = 0;
  queued = 0;
  readonly maxQueued: number;
  readonly #limit: GradientLimit;
  /** FIFO of waiters; cancelled ones stay until reached (`queued` counts the live ones). */
  #waiters: GateWaiter[] = [];
  #head = 0;
  #lastLimit: number;
  readonly #onLimit: ((limit: number) => void) | undefined;

  constructor(
    options: NormalizedConcurrencyOptions,
    random: () => number,
    onLimit?: (limit: number) => void,
  ) {
    this.#limit = createGradientLimit(options.limit, random);
    this.maxQueued = options.maxQueued;
    this.#lastLimit = this.#limit.limit();
    this.#onLimit = onLimit;
  }

  limit(): number {
    return this.#limit.limit();
  }

  /** Takes a slot if one is free and no call waits for one. */
  tryAcquire(): boolean {
    if (this.queued !== 0 || this.inFlight >= this.#limit.limit()) return false;
    this.inFlight++;
    return true;
  }

  /**
   * Gives a slot back; `rttMs` (undefined when the outcome says nothing of the dependency's
   * latency) feeds the limit. The slot goes to the first waiter while the limit allows.
   */
  release(rttMs: number | undefined, startedMs: number, nowMs: number): void {
    const limit = this.#limit;
    if (rttMs !== undefined) {
      limit.sample(rttMs, startedMs, nowMs, this.inFlight);
      const now = limit.limit();
      if (now !== this.#lastLimit) {
        this.#lastLimit = now;
        this.#onLimit?.(now);
      }
    }
    this.inFlight--;
    while (this.queued !== 0 && this.inFlight < limit.limit()) {
      const waiter = this.#shift();
      this.inFlight++;
      waiter.grant();
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
    if (this.queued === 0) {
      this.#waiters = [];
      this.#head = 0;
    }
  }

  /**
   * How long a call queued behind `ahead` others can expect to wait, in ms, by Little's law (a slot
   * frees every latency ÷ limit ms on average); `fallbackMs` stands for the latency before any is
   * measured.
   */
  expectedWaitMs(ahead: number, fallbackMs: number): number {
    const limit = this.#limit;
    return ((ahead + 1) * (limit.latencyMs() ?? fallbackMs)) / limit.limit();
  }

  snapshot(): ConcurrencySnapshot {
    return { ...this.#limit.state(), inFlight: this.inFlight, queued: this.queued };
  }

  #shift(): GateWaiter {
    // `queued` counts live waiters, so one is ahead: the loop ends.
    for (;;) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head++] = undefined as unknown as GateWaiter;
      if (this.#head > 1024 && this.#head * 2 > this.#waiters.length) {
        this.#waiters = this.#waiters.slice(this.#head);
        this.#head = 0;
      }
      if (!waiter.done) {
        this.queued--;
        return waiter;
      }
    }
  }
}
