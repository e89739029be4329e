import { RETRYABLE_STATUSES } from '../policy/classify.js';
import { type Attempt, HEDGE_LOST } from './attempt.js';
import type { Call } from './call.js';
import type { TimerEntry } from './coarse-timer.js';
import type { DependencyContext, Handler, Step } from './pipeline.js';
import { type DependencyResponse, discard } from './response.js';

/** The hedging setting of a dependency: off, a fixed delay in ms, or the live p95. */
export type HedgePolicy = { at: 'p95' | number } | false;

/**
 * How long to wait before sending a hedge copy, in ms, or `undefined` for no hedge: hedging off,
 * or `'p95'` while no p95 is known. Pure, shared with the simulator.
 *
 * @example hedgeDelayMs({ at: 'p95' }, 38) // 38
 * @see Dean & Barroso, "The Tail at Scale" (CACM 2013): defer the second request until the first
 * has been outstanding longer than the 95th-percentile expected latency.
 */
export function hedgeDelayMs(policy: HedgePolicy, p95Ms: number | undefined): number | undefined {
  if (policy === false) return undefined;
  if (policy.at === 'p95') return p95Ms === undefined || !(p95Ms >= 0) ? undefined : p95Ms;
  return policy.at;
}

/**
 * Whether a try may be hedged: hedging on, a delay known, the request idempotent (GET/HEAD/OPTIONS
 * or an `Idempotency-Key`) with a replayable body, and the delay ending before the try's own
 * timeout (a copy sent when the first is about to be cut has no time to win). Pure.
 */
export function shouldHedge(
  delayMs: number | undefined,
  request: { idempotent: boolean; replayable: boolean },
  tryTimeoutMs: number,
): delayMs is number {
  return delayMs !== undefined && request.idempotent && request.replayable && delayMs < tryTimeoutMs;
}

/**
 * The hedging step: sends the try; when it has not answered after the hedge delay, and the retry
 * budget grants an extra attempt, sends one copy to another instance. The first acceptable answer
 * (a status below 400, or a final one) wins and the other copy is aborted; a retryable failure of
 * one copy waits for the other. Non-idempotent requests and stream bodies are never hedged.
 */
export function hedgeStep(ctx: DependencyContext): Step {
  return (next) => (call) => {
    // One instance: no other instance to send a copy to (see InstancePicker.pickHedge).
    if (ctx.hedge === false || !call.hedgeable || ctx.instances.count === 1) return next(call);
    const delay = hedgeDelayMs(ctx.hedge, ctx.live.p95Ms);
    const remaining = call.limitMs - ctx.clock.now();
    const tryMs = Math.min(remaining, ctx.policy.readMs);
    if (!shouldHedge(delay, call, tryMs)) return next(call);
    return new HedgedTry(ctx, call, next, delay).start();
  };
}

/** One try with a possible hedge copy; a coarse-timer entry that fires at the hedge delay. */
class HedgedTry implements TimerEntry {
  dueAt: number;
  readonly #ctx: DependencyContext;
  readonly #call: Call;
  readonly #next: Handler;
  readonly #delayMs: number;
  #pending = 0;
  #settled = false;
  #hedged = false;
  #first: Attempt | null = null;
  #second: Attempt | null = null;
  /** A retryable failure kept while the other copy may still answer. */
  #held: { response: DependencyResponse } | { error: unknown } | null = null;
  #resolve!: (response: DependencyResponse) => void;
  #reject!: (error: unknown) => void;

  constructor(ctx: DependencyContext, call: Call, next: Handler, delayMs: number) {
    this.#ctx = ctx;
    this.#call = call;
    this.#next = next;
    this.#delayMs = delayMs;
    this.dueAt = ctx.clock.now() + delayMs;
  }

  start(): Promise<DependencyResponse> {
    const promise = new Promise<DependencyResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#first = this.#launch();
    if (!this.#settled) this.#ctx.timer.add(this);
    return promise;
  }

  onDue(): void {
    if (this.#settled || this.#hedged || this.#pending === 0) return;
    const ctx = this.#ctx;
    const call = this.#call;
    if (call.cancelled !== null) return;
    const instance = ctx.instances.pickHedge(
      this.#first === null ? -1 : this.#first.instance,
      ctx.clock.now(),
    );
    if (instance === -1) return;
    if (!ctx.budget.tryConsume()) {
      if (ctx.events.has('budget-exhausted'))
        ctx.events.emit('budget-exhausted', { dependency: ctx.name, requestId: call.id, purpose: 'hedge' });
      return;
    }
    this.#hedged = true;
    if (ctx.events.has('hedge'))
      ctx.events.emit('hedge', { dependency: ctx.name, requestId: call.id, afterMs: this.#delayMs });
    call.nextKind = 'hedge';
    call.forcedInstance = instance;
    this.#second = this.#launch();
  }

  #launch(): Attempt | null {
    this.#pending++;
    const call = this.#call;
    call.lastStarted = null;
    const promise = this.#next(call);
    const attempt = call.lastStarted as Attempt | null;
    promise.then(
      (response) => this.#onResponse(response),
      (error: unknown) => this.#onError(attempt, error),
    );
    return attempt;
  }

  #onResponse(response: DependencyResponse): void {
    this.#pending--;
    if (this.#settled) {
      discard(response);
      return;
    }
    const final = response.status < 400 || !RETRYABLE_STATUSES.has(response.status);
    if (!final && this.#pending > 0) {
      this.#hold({ response });
      return;
    }
    this.#settle();
    this.#resolve(response);
  }

  #onError(attempt: Attempt | null, error: unknown): void {
    this.#pending--;
    if (this.#settled) return;
    const retryable = attempt?.classification?.retry === true;
    if (retryable && this.#pending > 0) {
      this.#hold({ error });
      return;
    }
    this.#settle();
    this.#reject(error);
  }

  #hold(failure: { response: DependencyResponse } | { error: unknown }): void {
    if (this.#held !== null && 'response' in this.#held) discard(this.#held.response);
    this.#held = failure;
  }

  #settle(): void {
    this.#settled = true;
    this.#ctx.timer.delete(this);
    if (this.#held !== null && 'response' in this.#held) discard(this.#held.response);
    this.#held = null;
    // The other copy lost: abort it so its connection (or the queue slot) is freed at once.
    if (this.#first !== null && !this.#first.done) this.#first.abort(HEDGE_LOST);
    if (this.#second !== null && !this.#second.done) this.#second.abort(HEDGE_LOST);
  }
}
