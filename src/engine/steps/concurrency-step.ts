import type { TimerEntry } from '../../coarse-timer.js';
import { ConcurrencyLimitedError } from '../../errors.js';
import { judgeStatus } from '../../policy/classify.js';
import type { ConcurrencyGate, GateWaiter } from '../../policy/concurrency-gate.js';
import type { Call, DependencyResponse, Interruptible } from '../call.js';
import { closedError, withHistory } from '../history.js';
import type { DependencyContext, Handler, Step } from '../pipeline.js';

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

  /** A slot is this call's (the gate already counted it). */
  grant(): void {
    this.#settle();
    this.#resolve();
  }

  /** It could no longer start in time for the dependency's latency (p99, or more if measured). */
  onDue(nowMs: number): void {
    if (this.done) return;
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
 * The adaptive concurrency step (on with `concurrency`): a call takes a slot of the dependency's
 * {@link ConcurrencyGate} before its first attempt and gives it back when it ends. The limit is
 * the gradient algorithm's (`policy/gradient-limit.ts`), fed with the duration of every call that
 * the dependency served (a status below 500 other than 429); an attempt that ran out of time is a
 * **drop** (a multiplicative decrease, and its duration a censored sample) the moment it does, and
 * an attempt given up while the dependency may still work on it keeps a slot for about one more
 * latency (`ConcurrencyGate.abandon`, called by the attempt step).
 *
 * When no slot is free the call waits, first come first served, in a bounded queue — but only while
 * it can still start in time: it fails at once with `CONCURRENCY_LIMITED` when the queue is full or
 * when the wait it faces (the calls ahead × the latency ÷ the limit, by Little's law) leaves less
 * than the dependency's latency (its p99, or the latency the limit measures now when that is
 * longer) before its deadline, and it fails as soon as its wait has eaten that margin. A limited
 * call never reached the dependency: the retry budget counts it as refused (`recordRefused`), not
 * as an original, and the `limited` event says `reason: 'concurrency'`.
 *
 * @see docs/overload.md
 */
export function concurrencyStep(ctx: DependencyContext, gate: ConcurrencyGate): Step {
  return (next) => (call, nowMs) => {
    if (gate.tryAcquire()) return held(ctx, gate, call, next, nowMs);
    return queued(ctx, gate, call, next, nowMs);
  };
}

/**
 * Runs the call in the slot it holds and gives the slot back when it ends. Not an `async`
 * function: on the healthy path one `.then()` costs less than a suspended async frame.
 */
function held(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  next: Handler,
  startedMs: number,
): Promise<DependencyResponse> {
  let sent: Promise<DependencyResponse>;
  try {
    sent = next(call, startedMs);
  } catch (error) {
    gate.release(undefined, startedMs, ctx.clock.now());
    return Promise.reject(error);
  }
  return sent.then(
    (response) => {
      const now = ctx.clock.now();
      // A sample when the dependency served the call; a drop when it refused the work (overload).
      const verdict = judgeStatus(response.status);
      gate.release(
        verdict.failed || verdict.refused ? undefined : now - startedMs,
        startedMs,
        now,
        verdict.refused,
      );
      return response;
    },
    (error: unknown) => {
      // An attempt that ran out of time was fed to the limit when it did (a drop, and a censored
      // sample: `ConcurrencyGate.abandon`); the call's own end adds nothing more.
      gate.release(undefined, startedMs, ctx.clock.now());
      throw error;
    },
  );
}

async function queued(
  ctx: DependencyContext,
  gate: ConcurrencyGate,
  call: Call,
  next: Handler,
  now: number,
): Promise<DependencyResponse> {
  // The call must start early enough for the dependency's p99, or for the latency the limit
  // measures now if that is longer (a dependency slowed by overload answers later than its p99).
  const latencyMs = gate.latencyMs();
  const needMs = latencyMs !== undefined && latencyMs > ctx.live.p99Ms ? latencyMs : ctx.live.p99Ms;
  const startBy = call.limitMs - needMs;
  if (gate.queued >= gate.maxQueued) throw limited(ctx, gate, call, now, 'the wait queue is full.');
  const waitMs = gate.expectedWaitMs(gate.queued, needMs);
  if (now + waitMs > startBy)
    throw limited(
      ctx,
      gate,
      call,
      now,
      `the wait ahead (≈ ${Math.ceil(waitMs)} ms) leaves less than the dependency's latency (${Math.ceil(needMs)} ms) before the deadline.`,
    );
  await new Promise<void>((resolve, reject) => {
    const waiter = new Waiter(ctx, gate, call, startBy, resolve, reject);
    gate.enqueue(waiter);
    ctx.timer.add(waiter);
    call.waitOn(waiter);
    ctx.sleepers.add(call);
  });
  const admitted = ctx.clock.now();
  call.ledger.queued(now, admitted);
  return held(ctx, gate, call, next, admitted);
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
