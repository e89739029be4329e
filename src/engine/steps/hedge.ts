import type { TimerEntry } from '../../coarse-timer.js';
import { AttemptAbandonedError } from '../../errors.js';
import { hedgeDelayMs, shouldHedge } from '../../policy/hedge-delay.js';
import type { Call } from '../call.js';
import { type DependencyContext, type Outcome, slowAsAWhole } from '../pipeline.js';
import { type DependencyResponse, discard } from '../response.js';
import { Attempt, HEDGE_LOST, type TryHandler, type TryReferee, type TryStep } from './attempt.js';

/**
 * The hedging step: sends the try; when it has not answered after the hedge delay, and the retry
 * budget grants an extra attempt, sends one copy to another instance. The first final answer (a
 * status below 400, or one no retry would change) wins — the rule is `Attempt.claim`, which the
 * attempt step applies as each answer comes in, so the `won` of `attempt-end` and the answer of the
 * try are the same decision — and the other copy is aborted; a retryable failure of one copy waits
 * for the other. Only GET/HEAD/OPTIONS or requests carrying an `Idempotency-Key` are
 * hedged (a PUT or DELETE is retried, never doubled in flight); stream bodies never.
 *
 * The step referees the copies itself, from their outcomes: the referee ({@link HedgedTry}) is the
 * outcome the first copy settles, and the copy settles one of the referee's own. It aborts a losing copy through the attempt handed down for it (the
 * try's first copy, from the retry step; one of its own for the hedge copy). A try that cannot be hedged
 * passes straight through, at no cost — unless `lastAttempt: 'deadline'` may send its retry beside
 * its attempt at the read timeout (`HedgedTry.sendBeside`): then it gets a referee with no hedge
 * timer, the same rules deciding between the two copies.
 */
export function hedgeStep(ctx: DependencyContext): TryStep {
  return (next) => (call, first, nowMs, out) => {
    // One instance: no other instance to send a copy to.
    if (!call.hedgeable || ctx.sole !== -1) {
      next(call, first, nowMs, out);
      return;
    }
    const delay = hedgeDelay(ctx, call, first);
    // With `lastAttempt: 'deadline'` a try whose read timeout can fire gets a referee even when it
    // is not hedged: a retry its read timeout reserves is sent beside the attempt (`sendBeside`).
    if (delay < 0 && (ctx.lastAttempt !== 'deadline' || first.tryByDeadline)) {
      next(call, first, nowMs, out);
      return;
    }
    const hedged = new HedgedTry(ctx, call, next, first, delay, nowMs, out);
    first.referee = hedged;
    next(call, first, nowMs, hedged);
    if (delay >= 0) ctx.timer.add(hedged);
  };
}

/** The hedge delay of the try of `first`, ms, or -1 when it is not hedged. */
function hedgeDelay(ctx: DependencyContext, call: Call, first: Attempt): number {
  if (ctx.hedge === false || call.hedgeOff) return -1;
  // Hedging is for the tail of one slow instance or call; when most attempts outlast the read
  // timeout the dependency is slow as a whole, and a copy would wait in the same queue.
  if (slowAsAWhole(ctx)) return -1;
  const delay = hedgeDelayMs(ctx.hedge, ctx.live.p95Ms);
  // The try's own time: its bound, or less when the deadline is nearer (`Attempt.forTry`).
  return shouldHedge(delay, HEDGEABLE, Math.min(first.remainingMs, first.tryTimeoutMs)) ? delay : -1;
}

/** What the step let through (`call.hedgeable`): idempotent, and a body that can be sent again. */
const HEDGEABLE = Object.freeze({ idempotent: true, replayable: true });

/**
 * One try that may get a second copy: a coarse-timer entry that fires at the hedge delay and sends
 * a hedge copy, or (`lastAttempt: 'deadline'`) the retry a read timeout sends beside the attempt
 * (`sendBeside`); and the referee between the first copy's outcome and the second's. One second
 * copy per try at most.
 */
export class HedgedTry implements TimerEntry, TryReferee, Outcome {
  dueAt: number;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  readonly #ctx: DependencyContext;
  readonly #call: Call;
  readonly #next: TryHandler;
  /** The try's first copy, handed down by the retry step. */
  readonly #first: Attempt;
  readonly #delayMs: number;
  #firstDone = false;
  #copy: Attempt | null = null;
  /** The second copy was sent. */
  #copySent = false;
  #copyDone = false;
  /** The copy failed with {@link HedgedTry.#copyError} (not an answer). */
  #copyErred = false;
  #copyError: unknown = undefined;
  /** The try answers with the copy's outcome: its answer (or error) is the caller's. */
  #copyTaken = false;
  /** Where the try's outcome goes. */
  readonly #out: Outcome;
  /** The copy's acceptable answer, once it has beaten the first copy. */
  #winner: DependencyResponse | null = null;
  /** The copy's retryable failure response, kept in case the first copy does worse. */
  #copyFailure: DependencyResponse | null = null;

  constructor(
    ctx: DependencyContext,
    call: Call,
    next: TryHandler,
    first: Attempt,
    delayMs: number,
    nowMs: number,
    out: Outcome,
  ) {
    this.#out = out;
    this.#ctx = ctx;
    this.#call = call;
    this.#next = next;
    this.#first = first;
    this.#delayMs = delayMs;
    // Not hedged (-1): never on the timer; only `sendBeside` sends a copy.
    this.dueAt = delayMs < 0 ? Number.POSITIVE_INFINITY : nowMs + delayMs;
  }

  get copyInFlight(): boolean {
    return this.#copySent && !this.#copyDone;
  }

  sendBeside(nowMs: number): boolean {
    const ctx = this.#ctx;
    const call = this.#call;
    if (this.#firstDone || this.#copySent || call.cancelled !== null || ctx.closed) return false;
    // A stream body not (yet) recorded whole cannot be sent again.
    if (!call.replayable) return false;
    const instance = this.#take(nowMs);
    if (instance === -1) return false;
    const first = this.#first;
    // No hedge copy after this one.
    ctx.timer.delete(this);
    // The retry the read timeout took from the budget is this copy, and the try now stands for
    // two of the call's attempts: the retry step counts them (`tryNumber`).
    first.retryReserved = false;
    first.tryNumber++;
    if (ctx.events.has('retry'))
      ctx.events.emit('retry', {
        dependency: ctx.name,
        requestId: call.id,
        attempt: call.attemptCount,
        delayMs: 0,
        reason: 'read-timeout',
        anotherInstance: true,
      });
    this.#send(Attempt.beside(first, instance, nowMs), nowMs);
    return true;
  }

  onDue(): void {
    const ctx = this.#ctx;
    const call = this.#call;
    if (this.#firstDone || this.#copySent || call.cancelled !== null) return;
    // A stream body still being sent (or longer than a call records): no copy, no budget spent.
    if (!call.replayable) return;
    const now = ctx.clock.now();
    const instance = this.#take(now);
    if (instance === -1) return;
    if (!ctx.budget.tryConsume()) {
      this.#untake(instance, now);
      if (ctx.events.has('budget-exhausted'))
        ctx.events.emit('budget-exhausted', { dependency: ctx.name, requestId: call.id, purpose: 'hedge' });
      return;
    }
    if (ctx.events.has('hedge'))
      ctx.events.emit('hedge', { dependency: ctx.name, requestId: call.id, afterMs: this.#delayMs });
    this.#send(Attempt.hedge(this.#first, instance), now);
  }

  /**
   * Picks another instance than the first copy's for the second copy and takes it a slot of the
   * concurrency limit of its own: none free, no copy (docs/overload.md). Returns the instance, or
   * -1 (and takes nothing) when there is none or no slot.
   */
  #take(now: number): number {
    const ctx = this.#ctx;
    const firstAttempt = this.#first.started ? this.#first : null;
    const instance = ctx.balancer.pickHedge(firstAttempt === null ? -1 : firstAttempt.instance, now);
    if (instance === -1) return -1;
    if (ctx.concurrency !== null && !ctx.concurrency.tryAcquire(now)) {
      ctx.balancer.finished(instance, 'neutral', 0, now);
      return -1;
    }
    return instance;
  }

  /** Gives back what {@link HedgedTry.#take} took for a copy that will not be sent. */
  #untake(instance: number, now: number): void {
    // The pick counted a call in flight that will not be sent.
    this.#ctx.balancer.finished(instance, 'neutral', 0, now);
    this.#ctx.concurrency?.release(undefined, now, now);
  }

  /** Sends the try's second copy, `copy`, under the concurrency slot `#take` took (if any). */
  #send(copy: Attempt, now: number): void {
    const ctx = this.#ctx;
    const gate = ctx.concurrency;
    this.#copy = copy;
    this.#copySent = true;
    this.#next(this.#call, copy, now, {
      answered: (response) => {
        gate?.release(undefined, now, ctx.clock.now());
        this.#copyAnswered(response);
      },
      failed: (error) => {
        gate?.release(undefined, now, ctx.clock.now());
        this.#copyFailed(error);
      },
    });
  }

  /** The first copy answered: the try answers (an outcome never throws: see `Outcome`). */
  answered(response: DependencyResponse): void {
    try {
      this.#firstAnswered(response);
    } catch (error) {
      this.#out.failed(error);
    }
  }

  /** The first copy failed with `error`: the try answers, or fails. */
  failed(error: unknown): void {
    try {
      this.#firstFailed(error);
    } catch (thrown) {
      this.#out.failed(thrown);
    }
  }

  #firstAnswered(response: DependencyResponse): void {
    this.#firstDone = true;
    this.#ctx.timer.delete(this);
    const out = this.#out;
    if (this.#winner !== null) {
      discard(response);
      out.answered(this.#winner);
      return;
    }
    if (!this.#copySent) {
      out.answered(response);
      return;
    }
    const winner = this.#first.winner;
    if (winner === this.#first) {
      this.#copy?.abort(HEDGE_LOST);
      this.#dropCopyFailure();
      out.answered(response);
      return;
    }
    // A retryable answer: the copy may do better — unless it already failed too. (A copy that won
    // before its own outcome came answers the try.)
    if (this.#copyDone && winner === null) {
      this.#dropCopyFailure();
      out.answered(response);
      return;
    }
    discard(response);
    this.#takeCopy();
  }

  #firstFailed(error: unknown): void {
    this.#firstDone = true;
    this.#ctx.timer.delete(this);
    const out = this.#out;
    if (this.#winner !== null) {
      out.answered(this.#winner);
      return;
    }
    if (
      this.#copySent &&
      !this.#copyDone &&
      (this.#first.winner === this.#copy || retryable(this.#first) || error instanceof AttemptAbandonedError)
    ) {
      this.#dropCopyFailure();
      this.#takeCopy();
      return;
    }
    if (this.#copyFailure !== null) {
      // Both failed: the copy's answer is the later one — and an answer beats an error.
      const failure = this.#copyFailure;
      this.#copyFailure = null;
      out.answered(failure);
      return;
    }
    out.failed(error);
  }

  #dropCopyFailure(): void {
    if (this.#copyFailure !== null) discard(this.#copyFailure);
    this.#copyFailure = null;
  }

  /** The try answers with the copy's outcome: now, when the copy already has one, else as it comes. */
  #takeCopy(): void {
    this.#copyTaken = true;
    if (!this.#copyDone) return;
    if (this.#copyErred) {
      this.#out.failed(this.#copyError);
      return;
    }
    const kept = this.#copyFailure;
    this.#copyFailure = null;
    if (kept !== null) this.#out.answered(kept);
    else this.#out.failed(HEDGE_LOST);
  }

  #copyAnswered(response: DependencyResponse): void {
    this.#copyDone = true;
    if (this.#copyTaken) {
      this.#out.answered(response);
      return;
    }
    if (this.#firstDone) {
      // The first copy's answer won: this one, arriving late, must free its connection.
      discard(response);
      return;
    }
    // The copy won (the attempt step's rule, `Attempt.claim`); else its answer, final or not,
    // is kept in case the first copy does worse.
    if (this.#first.winner === this.#copy) {
      this.#winner = response;
      this.#first.abort(HEDGE_LOST);
    } else {
      this.#copyFailure = response;
    }
  }

  #copyFailed(error: unknown): void {
    this.#copyDone = true;
    this.#copyErred = true;
    this.#copyError = error;
    if (this.#copyTaken) this.#out.failed(error);
  }
}

/** Whether the error `attempt` failed with may be retried (as the attempt step judged it). */
function retryable(attempt: Attempt): boolean {
  return attempt.failure?.classification.retry === true;
}
