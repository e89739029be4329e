import type { Balancer } from '../balancer/balancer.js';
import type { Clock } from '../clock.js';
import type { CoarseTimer } from '../coarse-timer.js';
import type { CalibratedPolicy } from '../policy/calibrate.js';
import type { ConcurrencyGate } from '../policy/concurrency-gate.js';
import type { RetryBudget } from '../policy/retry-budget.js';
import type { Transport } from '../transport/transport.js';
import type { Call, DependencyResponse } from './call.js';
import type { EventHub } from './events.js';
import type { IgnoredServerTiming } from './ledger.js';
import type { LiveLatency } from './live-latency.js';
import { discard } from './response.js';
import type { NormalizedRequeueOptions } from './steps/requeue.js';

/**
 * Where the outcome of a call (or of one try, below the retry step) goes: `answered` with the
 * response or `failed` with the error, exactly one of the two, once. A handler never settles it
 * from inside its own call — always on a later turn (`failLater` for what is known at once) — so
 * a step may hand `out` down and set up what follows after `next()` returns, as it could after
 * taking a promise. An outcome never throws: a step that wraps one (to do its own bookkeeping
 * after the answer) catches what its bookkeeping throws and passes it up as the failure.
 *
 * A callback, not a promise: a promise and its `.then()` per step that looks at the answer (its
 * reaction, its derived promise, two closures and a turn of the microtask queue) were, with the
 * interceptor's own, about a fifth of what prazo allocated per call (BENCHMARKS.md, "The outcome as
 * a callback"). The transport's promise stays, one per attempt: the attempt step takes it up with
 * the `.then()` that runs every outcome above it in the async context the attempt was sent in
 * (the caller's, for the first try and its retries), as an `AsyncLocalStorage` a listener reads
 * expects; a queue of outcomes shared by all the attempts ran them in their connection's.
 */
export interface Outcome {
  answered(response: DependencyResponse): void;
  failed(error: unknown): void;
}

/**
 * Sends a call and settles `out` with its outcome. `nowMs` is the dependency's clock read when the
 * call reached this step: the engine reads it once as the call enters, and every step of the same
 * synchronous run passes it on, as reading it again there would give the same instant at ≈ 45 ns
 * a read (six reads were ≈ 0.28 µs of a call); a step that waited (a queue, a delay) reads it again.
 */
export type Handler = (call: Call, nowMs: number, out: Outcome) => void;

/** One concern of the client, wrapped around the rest: `(next) => (call, nowMs, out) => void`. */
export type Step = (next: Handler) => Handler;

/**
 * An outcome that does a step's own work as the call ends (`ended`), then passes the outcome up to
 * `out`. What that work throws fails the call instead (an answer's body is then let go): the
 * outcome itself never throws.
 */
export abstract class Epilogue implements Outcome {
  readonly #out: Outcome;

  constructor(out: Outcome) {
    this.#out = out;
  }

  /** The step's own work as the call ends with `response`, or (`response` undefined) `error`. */
  protected abstract ended(response: DependencyResponse | undefined, error: unknown): void;

  answered(response: DependencyResponse): void {
    try {
      this.ended(response, undefined);
    } catch (error) {
      discard(response);
      this.#out.failed(error);
      return;
    }
    this.#out.answered(response);
  }

  failed(error: unknown): void {
    try {
      this.ended(undefined, error);
    } catch (thrown) {
      this.#out.failed(thrown);
      return;
    }
    this.#out.failed(error);
  }
}

/** Fails `out` with `error` on a later turn: for a step that knows the outcome at once. */
export function failLater(out: Outcome, error: unknown): void {
  NEXT_TURN.then(() => out.failed(error));
}

/**
 * A settled promise: `.then(f)` on it runs `f` on the next turn of the microtask queue, in the async
 * context `.then()` was called in. Node's `queueMicrotask()` makes an async resource and a bound
 * function per call; this, a reaction.
 */
const NEXT_TURN = Promise.resolve();

/**
 * Hands the call on to `next` from a callback (after a wait): what `next` throws instead of
 * settling `out` fails the call, as the engine does for the first step.
 */
export function sendOn(next: Handler, call: Call, nowMs: number, out: Outcome): void {
  try {
    next(call, nowMs, out);
  } catch (error) {
    out.failed(error);
  }
}

/** An outcome as a promise: for the paths that wait (a retry, a queue), not the call's usual one. */
export function outcomeOf(send: (out: Outcome) => void): Promise<DependencyResponse> {
  return new Promise((resolve, reject) => send({ answered: resolve, failed: reject }));
}

/** Settles `out` as `promise` settles. */
export function settleWith(promise: Promise<DependencyResponse>, out: Outcome): void {
  promise.then(
    (response) => out.answered(response),
    (error: unknown) => out.failed(error),
  );
}

/** What the steps of one dependency share. `policy` is replaced whole, never mutated. */
export interface DependencyContext {
  readonly name: string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly transport: Transport;
  /** Chooses the instance of every attempt and learns from its outcome (`src/balancer/`). */
  readonly balancer: Balancer;
  /**
   * The index of the only instance while the fleet has one, else -1: the attempt step then skips
   * the balancer (nothing to choose, nothing to eject). Kept by {@link DependencyContext.setOrigins}.
   */
  sole: number;
  /** Requeues of never-written attempts, or false. */
  readonly requeue: NormalizedRequeueOptions | false;
  /** The requeue budget (its own, apart from the retry budget). */
  readonly requeueBudget: RetryBudget;
  /**
   * Makes the fleet `origins` (normalised origins): the balancer gets the new set, added instances
   * enter in slow start, removed ones drain (`instance-drained` says when the last call ended).
   * The transport must already know the added origins.
   */
  setOrigins(origins: readonly string[]): void;
  readonly timer: CoarseTimer;
  readonly events: EventHub;
  readonly budget: RetryBudget;
  readonly live: LiveLatency;
  /** Connect/read timeouts and attempts in force (swapped atomically by `setPolicy`). */
  policy: CalibratedPolicy;
  readonly hedge: { at: 'p95' | number } | false;
  /** What ends an attempt at its read timeout when no retry could follow it (see `lastAttempt`). */
  readonly lastAttempt: 'read-timeout' | 'deadline';
  /**
   * The share of the recent attempts that took longer than the read timeout (answered late or
   * timed out; one that waits past it is counted as it passes it): an exponentially weighted
   * average over about the last {@link SLOW_SHARE_SPAN}
   * attempts, 0 … 1. From one half up the dependency is slow as a whole: no hedge copy is sent (it
   * would wait in the same queue), and with `lastAttempt: 'deadline'` no retry follows a read
   * timeout (see `reserveRetryAfter`).
   */
  slowShare: number;
  /** The adaptive concurrency limit's slots, or null when `concurrency` is off. */
  readonly concurrency: ConcurrencyGate | null;
  readonly userDeadlineMs: number;
  readonly localMaxMs: number;
  /** Calls waiting out a retry delay (woken by `close()`). */
  readonly sleepers: Set<Call>;
  /** Set by `close()`. */
  closed: boolean;
  /** Told when an answer's `Server-Timing` was (partly) ignored: the `server-timing-ignored` event. */
  readonly serverTimingIgnored: IgnoredServerTiming;
}

/** Attempts the {@link DependencyContext.slowShare} average spans, about. */
export const SLOW_SHARE_SPAN = 20;

/**
 * Whether most of the dependency's recent attempts outlasted the read timeout: it is slow as a whole
 * (it queues), not one instance or one call, and neither a hedge copy nor a retry would be faster.
 */
export function slowAsAWhole(ctx: DependencyContext): boolean {
  return ctx.slowShare >= 0.5;
}

/**
 * The instance a retry of a call that failed on `instance` leaves for another of the fleet
 * (`Balancer.pickRetry` prefers one it has not failed on), or -1 when it may go back or queue behind
 * the same work: the dependency has one instance, the call is a write pinned to where it may have
 * been written, or the dependency is slow as a whole (every instance queues). The work abandoned on
 * the instance a retry leaves does not hold that retry back (`ConcurrencyGate.pastLimitWithAbandoned`):
 * one hung instance of a fleet is not the fleet past its limit.
 */
export function retryLeaves(ctx: DependencyContext, call: Call, instance: number): number {
  return ctx.sole === -1 && call.pinnedOrigin === null && !slowAsAWhole(ctx) ? instance : -1;
}

/**
 * Wraps `last` in `steps`, the first step outermost. The order of a call is written once, here
 * and in `engine.ts`, nowhere else: the call's steps, then the retry step (a {@link Handler}
 * made of a `TryHandler`: steps/attempt.ts), then the try's steps down to the attempt.
 */
export function compose(steps: readonly Step[], last: Handler): Handler {
  let handler = last;
  for (let i = steps.length - 1; i >= 0; i--) handler = steps[i]!(handler);
  return handler;
}
