import type { TimerEntry } from '../../coarse-timer.js';
import { ConcurrencyLimitedError } from '../../errors.js';
import type { ConcurrencyGate, GateWaiter } from '../../policy/concurrency-gate.js';
import type { Call, Interruptible } from '../call.js';
import { closedError, withHistory } from '../history.js';
import type { DependencyContext } from '../pipeline.js';

/*
 * The adaptive concurrency limit of a call (on with `concurrency`; run by the overload step,
 * overload-step.ts): a call takes a slot of the dependency's {@link ConcurrencyGate} before its
 * first attempt and gives it back when it ends. The limit is the gradient algorithm's
 * (`policy/gradient-limit.ts`), fed with the duration of every call that the dependency served (a
 * status below 500 other than 429); an attempt that ran out of time is a **drop** (a multiplicative
 * decrease, and its duration a censored sample) the moment it does, and an attempt given up while
 * the dependency may still work on it keeps a slot for about one more latency
 * (`ConcurrencyGate.abandon`, called by the attempt step).
 *
 * When no slot is free the call waits in a bounded queue (first come first served, or newest first
 * while it stands with `order: 'adaptive-lifo'`: `ConcurrencyGate`) — but only while
 * it can still start in time: it fails at once with `CONCURRENCY_LIMITED` when the queue is full or
 * when the wait it faces (the calls ahead × the latency measured ÷ the limit, by Little's law; no
 * prediction before the limit has measured a latency) leaves less than the dependency's latency
 * (its p99, or the latency the limit measures now when that is longer) before its deadline, and it
 * fails as soon as its wait has eaten that margin — judged again, when that time comes, with the
 * latency the limit measures then (after a capacity drop its windows fall back as the dependency
 * answers faster). A call is also refused at once, rather than queued, while the dependency has
 * answered nothing for two read timeouts with calls in flight (`ConcurrencyGate.silentForMs`): a
 * hung dependency frees a slot only as the work it holds times out, and a call waiting for one would
 * hold its caller (a pool slot, a worker) for nothing. A limited
 * call never reached the dependency: the retry budget counts it as refused (`recordRefused`), not
 * as an original, and the `limited` event says `reason: 'concurrency'`. See docs/overload.md.
 */

/** A call waiting for a slot: an entry of the coarse timer, due when it could no longer start in time. */
class Waiter implements TimerEntry, GateWaiter, Interruptible {
  dueAt: number;
  done = false;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
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

  /**
   * A slot is this call's (the gate counted it) — unless its turn came after it could no longer
   * start in time, judged as {@link Waiter.onDue} judges it: the shared timer ticks coarsely and
   * the event loop may lag, so a waiter past its start-by time can be granted before its timer ends
   * its wait. Sent then, it would be answered after the deadline (load for nobody); it declines the
   * slot instead (the gate gives it to the next waiter) and fails with `CONCURRENCY_LIMITED`.
   */
  grant(): boolean {
    const ctx = this.#ctx;
    const nowMs = ctx.clock.now();
    // Only a turn past the time its timer is due is judged again, as the timer would judge it.
    if (this.dueAt < nowMs && this.#startBy() < nowMs) {
      this.#settle();
      this.#reject(
        limited(
          ctx,
          this.#gate,
          this.#call,
          nowMs,
          'its turn came when it could no longer fit the p99 (or the longer latency measured now).',
        ),
      );
      return false;
    }
    this.#settle();
    this.#resolve();
    return true;
  }

  /**
   * It could no longer start in time for the dependency's latency as it was when it began to wait
   * (p99, or more if measured): unless the latency measured now leaves it longer, it gives up.
   */
  onDue(nowMs: number): void {
    if (this.done) return;
    const startBy = this.#startBy();
    if (startBy > nowMs) {
      this.dueAt = startBy;
      this.#ctx.timer.add(this);
      return;
    }
    this.#gate.leave();
    this.#settle();
    this.#reject(
      limited(
        this.#ctx,
        this.#gate,
        this.#call,
        nowMs,
        'it waited until it could no longer fit the p99 (or the longer latency measured now).',
      ),
    );
  }

  /** When it must start by, judged now: in time for the p99, or the longer latency measured now. */
  #startBy(): number {
    return this.#call.limitMs - needMs(this.#ctx, this.#gate);
  }

  /** The caller cancelled, or the dependency closed. */
  interrupt(): void {
    if (this.done) return;
    this.#gate.leave();
    this.#settle();
    const call = this.#call;
    this.#reject(withHistory(call.cancelled ?? closedError(this.#ctx.name), call, this.#ctx.name));
  }

  #settle(): void {
    this.done = true;
    const ctx = this.#ctx;
    ctx.timer.delete(this);
    ctx.sleepers.delete(this.#call);
    this.#call.stopWaiting(this);
  }
}

/**
 * Waits for a slot of `gate` for a call that found none free at `now`: resolves once the gate
 * granted it one (counted in `gate.inFlight`: the caller releases it), rejects with
 * `CONCURRENCY_LIMITED` when it cannot wait or waited too long, or with the cancellation (or the
 * dependency's `close()`) that ended its wait.
 *
 * @see docs/overload.md
 */
export function waitForSlot(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  now: number,
): Promise<void> {
  const need = needMs(ctx, gate);
  const startBy = call.limitMs - need;
  const why = refusedAtOnce(ctx, gate, now, startBy, need);
  if (why !== null) return Promise.reject(limited(ctx, gate, call, now, why));
  return new Promise<void>((resolve, reject) => {
    const waiter = new Waiter(ctx, gate, call, startBy, resolve, reject);
    gate.enqueue(waiter);
    ctx.timer.add(waiter);
    call.waitOn(waiter);
    ctx.sleepers.add(call);
  });
}

/**
 * Why a call that found no slot free cannot wait for one (the end of a `CONCURRENCY_LIMITED`
 * message), or null when it may: the queue is full; the dependency has answered nothing for two read
 * timeouts with calls in flight (a slot would free only as those time out); or the wait ahead would
 * leave less than `need` before its deadline (it must start by `startBy`).
 */
function refusedAtOnce(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  now: number,
  startBy: number,
  need: number,
): string | null {
  if (gate.queued >= gate.maxQueued) return 'the wait queue is full.';
  const silentMs = gate.silentForMs(now);
  if (silentMs >= 2 * ctx.policy.readMs)
    return `the dependency has answered nothing for ${Math.floor(silentMs)} ms with calls in flight: a slot would free only as those time out.`;
  const waitMs = gate.expectedWaitMs(gate.queued);
  if (now + waitMs > startBy)
    return `the wait ahead (≈ ${Math.ceil(waitMs)} ms) leaves less than the dependency's latency (${Math.ceil(need)} ms) before the deadline.`;
  return null;
}

/**
 * How long before its deadline a waiting call must start: the dependency's p99, or the latency the
 * limit measures now if that is longer (a dependency slowed by overload answers later than its p99).
 */
function needMs(ctx: DependencyContext, gate: ConcurrencyGate): number {
  const latencyMs = gate.latencyMs();
  return latencyMs !== undefined && latencyMs > ctx.live.p99Ms ? latencyMs : ctx.live.p99Ms;
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
