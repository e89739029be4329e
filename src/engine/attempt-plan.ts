import type { ErrorVerdict } from '../policy/classify.js';
import type { AttemptKind } from '../wire/attempt-header.js';
import type { Interruptible } from './call.js';

/** An attempt of the call while it is in flight, as the steps above the attempt step see it. */
export interface AttemptInFlight {
  /** The instance's index in the balancer. */
  readonly instance: number;
  readonly origin: string;
  /** Set when its outcome is known. */
  readonly done: boolean;
  /** End of its bound, epoch ms: the read timeout or the deadline (a hedge copy inherits it). */
  readonly dueAt: number;
  /** The deadline, not the read timeout, sets {@link AttemptInFlight.dueAt}. */
  readonly byDeadline: boolean;
  /** Length of its bound, ms (for the timeout error's message). */
  readonly timeoutMs: number;
  abort(reason: unknown): void;
}

/**
 * The referee of a try's copies (the hedge step's `HedgedTry`), as the attempt step sees it: with
 * `lastAttempt: 'deadline'`, an attempt at its read timeout asks it to send the retry beside itself.
 */
export interface TryReferee {
  /** A second copy of the try is in flight. */
  readonly copyInFlight: boolean;
  /**
   * Sends the retry the read timeout of the try's first attempt reserved (`reserveRetryAfter`) as
   * a copy beside that attempt, which keeps waiting; returns whether it was sent.
   */
  sendBeside(nowMs: number): boolean;
}

/**
 * One attempt as the step that wants it hands it down to the attempt step: the retry step makes one
 * per try (the try's first copy), the hedge step one per hedge copy. It says what to send (`kind`,
 * the instance of a hedge copy) and is the handle on what was sent: the attempt step registers its
 * attempt on it, so the step that made the plan can abort that attempt (even before it starts) and,
 * once `next()` has settled, knows which instance it went to and, when it failed, how the attempt
 * step judged its error (`failure`): the error is classified once, there, and read by the steps above.
 *
 * The copies of one try share their first copy's plan (`first`): the try's bound, computed once
 * per try (`forTry`), which every copy's attempt ends by, and which of them won (`claim`). The first copy's plan is also what the call
 * waits on during the try: a cancellation interrupts it, which aborts both copies. One object per
 * try on the usual path, and one more per hedge copy.
 */
export class AttemptPlan implements Interruptible {
  readonly kind: AttemptKind;
  /** The instance the attempt must use (a hedge copy's), or -1 for the attempt step's choice. */
  readonly instance: number;
  /** The try's first copy: this plan itself, or the one a hedge copy backs up. */
  readonly first: AttemptPlan;
  // The try's bound, computed once per try by `AttemptPlan.forTry` (on the first copy's plan; a
  // hedge copy reads its first's): every attempt of the try ends by `dueAt`.
  /** The try's number in the call: 1 for the first (a requeue is not a try of its own). */
  tryNumber = 1;
  /** Time left before the call's deadline when the try started, ms. */
  remainingMs = 0;
  /** The attempt timeout: the read timeout, or the time left when that is shorter (at least 1 ms). */
  timeoutMs = 0;
  /** End of the try's attempts, epoch ms. */
  dueAt = 0;
  /** The deadline, not the read timeout, sets {@link AttemptPlan.dueAt}. */
  byDeadline = false;
  /**
   * A retry the budget already granted, taken by the attempt step when it cut this try's attempt at
   * its read timeout so that a retry would follow (`lastAttempt: 'deadline'`, `reserveRetryAfter`):
   * the retry step spends it instead of asking the budget again, so that attempts timing out together
   * are not cut for retries the budget then refuses.
   */
  retryReserved = false;
  /**
   * (On the first copy's plan.) The plan whose attempt gave the try's answer — the first copy's or
   * the hedge copy's — or null while none has: see {@link AttemptPlan.claim}, the one winner rule.
   */
  winner: AttemptPlan | null = null;
  /** The attempt sent for this plan, once the attempt step has started it. */
  attempt: AttemptInFlight | null = null;
  /** (On the first copy's plan.) The hedge step's referee of the try's copies, when it made one. */
  referee: TryReferee | null = null;
  /** How the attempt step judged the error this plan's attempt failed with (null until then, and on an answer). */
  failure: ErrorVerdict | null = null;
  /** The error judged in {@link AttemptPlan.failure}. */
  #error: unknown = undefined;
  /** (On the first copy's plan.) The hedge copy's plan, once the hedge step has made one. */
  #copy: AttemptPlan | null = null;
  #aborted = false;
  #reason: unknown = undefined;

  constructor(kind: AttemptKind, instance = -1, first: AttemptPlan | null = null) {
    this.kind = kind;
    this.instance = instance;
    if (first === null) {
      this.first = this;
    } else {
      this.first = first;
      first.#copy = this;
    }
  }

  /**
   * The plan of try number `tryNumber` of a call whose deadline is `limitMs`, started at `nowMs` under
   * a read timeout of `readMs`: the one place the try's bound is computed.
   */
  static forTry(
    kind: 'original' | 'retry',
    tryNumber: number,
    nowMs: number,
    limitMs: number,
    readMs: number,
  ): AttemptPlan {
    const plan = new AttemptPlan(kind);
    plan.tryNumber = tryNumber;
    return plan.#bound(nowMs, limitMs, readMs);
  }

  /**
   * The plan of the retry sent beside `first`'s attempt at its read timeout, to `instance`
   * (`TryReferee.sendBeside`): a copy of the try with a bound of its own, the deadline — no copy
   * follows it, so nothing would be sent in its place.
   */
  static beside(first: AttemptPlan, instance: number, nowMs: number, limitMs: number): AttemptPlan {
    const plan = new AttemptPlan('retry', instance, first);
    plan.tryNumber = first.tryNumber;
    return plan.#bound(nowMs, limitMs, Number.POSITIVE_INFINITY);
  }

  #bound(nowMs: number, limitMs: number, readMs: number): AttemptPlan {
    const remaining = limitMs - nowMs;
    this.remainingMs = remaining;
    if (remaining <= readMs) {
      this.timeoutMs = Math.max(remaining, 1);
      this.byDeadline = true;
    } else {
      this.timeoutMs = readMs;
    }
    this.dueAt = nowMs + this.timeoutMs;
    return this;
  }

  /** (On the first copy's plan.) The try's attempt started last: the hedge copy's once it is sent. */
  get lastSent(): AttemptInFlight | null {
    return this.#copy?.attempt ?? this.attempt;
  }

  /**
   * The one rule of who wins a try, applied by the attempt step as each answer comes in: the first
   * attempt of the try to get a final answer (below 400, or one no retry would change) wins it. Returns
   * whether this plan's attempt, answered with a final status, won (the `won` of `attempt-end`); the
   * hedge step then answers the try with the winner's response.
   */
  claim(): boolean {
    const first = this.first;
    if (first.winner !== null) return false;
    first.winner = this;
    return true;
  }

  /** The attempt step judged `error`, the failure of this plan's attempt, as `verdict`. */
  failed(error: unknown, verdict: ErrorVerdict): void {
    this.#error = error;
    this.failure = verdict;
  }

  /**
   * (On the first copy's plan.) How the attempt step judged `error`, when it is what one copy of the
   * try failed with (the try rejects with the error of either copy); null for any other error.
   */
  verdictOf(error: unknown): ErrorVerdict | null {
    if (this.failure !== null && this.#error === error) return this.failure;
    const copy = this.#copy;
    if (copy !== null && copy.failure !== null && copy.#error === error) return copy.failure;
    return null;
  }

  /** The attempt step started `attempt` for this plan. A plan aborted before that aborts it at once. */
  sent(attempt: AttemptInFlight): void {
    this.attempt = attempt;
    if (this.#aborted) attempt.abort(this.#reason);
  }

  /** Aborts the plan's attempt with `reason` (no-op once it is done), or the attempt it will start. */
  abort(reason: unknown): void {
    const attempt = this.attempt;
    if (attempt !== null) {
      if (!attempt.done) attempt.abort(reason);
      return;
    }
    this.#aborted = true;
    this.#reason = reason;
  }

  /** The call was cancelled during the try: aborts every copy of it (this plan is the try's first). */
  interrupt(reason: Error): void {
    this.abort(reason);
    this.#copy?.abort(reason);
  }
}
