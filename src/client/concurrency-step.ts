import { ConcurrencyLimitedError, InvalidOptionError, isPrazoError } from '../errors.js';
import {
  createGradientLimit,
  type GradientLimit,
  type GradientLimitOptions,
  type GradientLimitState,
  type NormalizedGradientLimitOptions,
  normalizeGradientLimitOptions,
} from '../policy/gradient-limit.js';
import type { Call, DependencyResponse } from './call.js';
import type { TimerEntry } from './coarse-timer.js';
import { withHistory } from './history.js';
import type { DependencyContext, Handler, Step } from './pipeline.js';
import { closedError } from './retry.js';

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
  #waiters: Waiter[] = [];
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
  enqueue(waiter: Waiter): void {
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

  #shift(): Waiter {
    // `queued` counts live waiters, so one is ahead: the loop ends.
    for (;;) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head++] = undefined as unknown as Waiter;
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

/** A call waiting for a slot: an entry of the coarse timer, due when it could no longer start in time. */
class Waiter implements TimerEntry {
  dueAt: number;
  done = false;
  readonly #ctx: DependencyContext;
  readonly #gate: ConcurrencyGate;
  readonly #call: Call;
  readonly #resolve: () => void;
  readonly #reject: (error: Error) => void;

  constructor(
    ctx: DependencyContext,
    gate: ConcurrencyGate,
    call: Call,
    dueAt: number,
    resolve: () => void,
    reject: (error: Error) => void,
  ) {
    this.#ctx = ctx;
    this.#gate = gate;
    this.#call = call;
    this.dueAt = dueAt;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** A slot is this call's (the gate already counted it). */
  grant(): void {
    this.#settle();
    this.#resolve();
  }

  /** It could no longer start in time for the p99. */
  onDue(nowMs: number): void {
    if (this.done) return;
    this.#gate.leave();
    this.#settle();
    this.#reject(
      limited(this.#ctx, this.#gate, this.#call, nowMs, 'it waited until it could no longer fit the p99.'),
    );
  }

  /** The caller cancelled, or the dependency closed. */
  wake = (): void => {
    if (this.done) return;
    this.#gate.leave();
    this.#settle();
    const call = this.#call;
    this.#reject(withHistory(call.cancelled ?? closedError(this.#ctx.name), call, this.#ctx.name));
  };

  #settle(): void {
    this.done = true;
    const ctx = this.#ctx;
    ctx.timer.delete(this);
    ctx.sleepers.delete(this.#call);
    if (this.#call.wake === this.wake) this.#call.wake = null;
  }
}

/**
 * The adaptive concurrency step (on with `concurrency`): a call takes a slot of the dependency's
 * {@link ConcurrencyGate} before its first attempt and gives it back when it ends. The limit is
 * the gradient algorithm's (`policy/gradient-limit.ts`), fed with the duration of every call that
 * the dependency served (a status below 500 other than 429) or that ran out of time.
 *
 * When no slot is free the call waits, first come first served, in a bounded queue — but only while
 * it can still start in time: it fails at once with `CONCURRENCY_LIMITED` when the queue is full or
 * when the wait it faces (the calls ahead × the latency ÷ the limit, by Little's law) leaves less
 * than the dependency's p99 before its deadline, and it fails as soon as its wait has eaten that
 * margin. A limited call never reached the dependency: the retry budget counts it as refused
 * (`recordRefused`), not as an original, and the `limited` event says `reason: 'concurrency'`.
 *
 * @see docs/overload.md
 */
export function concurrencyStep(ctx: DependencyContext, gate: ConcurrencyGate): Step {
  return (next) => (call) => {
    if (gate.tryAcquire()) return held(ctx, gate, call, next, ctx.clock.now());
    return queued(ctx, gate, call, next);
  };
}

async function held(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  next: Handler,
  startedMs: number,
): Promise<DependencyResponse> {
  let rttMs: number | undefined;
  try {
    const response = await next(call);
    const status = response.status;
    if (status < 500 && status !== 429) rttMs = ctx.clock.now() - startedMs;
    return response;
  } catch (error) {
    // A call that ran out of time says the dependency is at least that slow.
    if (isPrazoError(error, 'READ_TIMEOUT') || isPrazoError(error, 'DEADLINE_EXCEEDED'))
      rttMs = ctx.clock.now() - startedMs;
    throw error;
  } finally {
    gate.release(rttMs, startedMs, ctx.clock.now());
  }
}

async function queued(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  next: Handler,
): Promise<DependencyResponse> {
  const now = ctx.clock.now();
  const startBy = call.limitMs - ctx.live.p99Ms;
  if (gate.queued >= gate.maxQueued) throw limited(ctx, gate, call, now, 'the wait queue is full.');
  const waitMs = gate.expectedWaitMs(gate.queued, ctx.live.p99Ms);
  if (now + waitMs > startBy)
    throw limited(
      ctx,
      gate,
      call,
      now,
      `the wait ahead (≈ ${Math.ceil(waitMs)} ms) leaves less than its p99 (${Math.ceil(ctx.live.p99Ms)} ms) before the deadline.`,
    );
  await new Promise<void>((resolve, reject) => {
    const waiter = new Waiter(ctx, gate, call, startBy, resolve, reject);
    gate.enqueue(waiter);
    ctx.timer.add(waiter);
    call.wake = waiter.wake;
    ctx.sleepers.add(call);
  });
  return held(ctx, gate, call, next, ctx.clock.now());
}

function limited(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  nowMs: number,
  why: string,
): Error {
  ctx.budget.recordRefused?.();
  const limit = gate.limit();
  const remainingMs = call.limitMs - nowMs;
  if (ctx.events.has('limited'))
    ctx.events.emit('limited', {
      dependency: ctx.name,
      requestId: call.id,
      reason: 'concurrency',
      limit,
      queued: gate.queued,
      remainingMs,
    });
  return withHistory(
    new ConcurrencyLimitedError(ctx.name, why, { limit, queued: gate.queued, remainingMs }),
    call,
    ctx.name,
  );
}
