import type { TimerEntry } from '../../coarse-timer.js';
import {
  AttemptAbandonedError,
  DeadlineExceededError,
  ReadTimeoutError,
  RequestFailedError,
} from '../../errors.js';
import { type ErrorVerdict, judgeError, judgeStatus } from '../../policy/classify.js';
import { Exchange } from '../../transport/exchange.js';
import {
  type AbortLike,
  type AbortListener,
  type OutgoingRequest,
  type RequestBody,
  type TransportResponse,
  transportBoundMs,
} from '../../transport/transport.js';
import { ATTEMPT_HEADER, type AttemptKind, attemptHeaderValue } from '../../wire/attempt-header.js';
import { DEADLINE_HEADER } from '../../wire/deadline-header.js';
import { type HopReading, SERVER_TIMING_HEADER } from '../../wire/server-timing.js';
import type { Call, DependencyResponse, Interruptible } from '../call.js';
import type { EventSlot } from '../events.js';
import { instanceOutcomeOfAttempt } from '../instance-report.js';
import type { AttemptTiming } from '../ledger.js';
import {
  type DependencyContext,
  failLater,
  type Outcome,
  SLOW_SHARE_SPAN,
  slowAsAWhole,
} from '../pipeline.js';
import { guardBody } from './body-deadline.js';

const NONE_FAILED: readonly number[] = Object.freeze([]);
const NO_HEADERS: string[] = [];

/**
 * The referee of a try's copies (the hedge step's `HedgedTry`), as the attempt sees it: with
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
 * Sends one attempt of a try, as `attempt` says, and resolves with what the try answers. Below the
 * retry step, per-try state travels in the attempt, handed down by the step that made it, never on
 * the call. `nowMs` is as in `Handler` (pipeline.ts): the time the try (or the hedge copy) is sent at.
 */
export type TryHandler = (call: Call, attempt: Attempt, nowMs: number, out: Outcome) => void;

/** A concern of one try (the hedge), wrapped around the attempt step. */
export type TryStep = (next: TryHandler) => TryHandler;

/**
 * One attempt of a call: the one object per attempt. The step that wants it makes it — the retry step
 * one per try (the try's first copy: `Attempt.forTry`), the hedge step one per hedge copy or retry
 * sent beside — saying what to send (`kind`, the instance of a copy); the attempt step then starts
 * it (`start`: the instance chosen, the headers, the number) and sends it. It is at once:
 *
 * - the handle of the step that made it, which can abort it (even before it starts) and, once the
 *   try has settled, reads which instance it went to and, when it failed, how the attempt step judged
 *   its error (`failure`: the error is classified once, there, and read by the steps above);
 * - for the try's first copy, the try itself: its bound, computed once per try (`forTry`), which
 *   every copy ends by, and which copy won (`claim`); and what the call waits on during the try (a
 *   cancellation interrupts it, which aborts every copy);
 * - the request handed to the transport, the signal that aborts it (an `AbortSignal` costs
 *   microseconds to create and to listen to; undici only needs `aborted`, `reason` and one
 *   listener) and the entry of the shared coarse timer that enforces its timeout;
 * - the transport's exchange (it extends `Exchange`): undici's dispatch handler for its request,
 *   the one its outcome is told (`ExchangeOutcome`) and the feed of its body. Its `headers`, `body` and `statusCode` are
 *   the answer's; the request's are `requestHeaders` and `requestBody`.
 *
 * What the call already holds (method, path, body) is read from it rather than copied: every field
 * is paid on every attempt.
 */
export class Attempt
  extends Exchange
  implements OutgoingRequest, AbortLike, TimerEntry, AttemptTiming, Interruptible
{
  readonly kind: AttemptKind;
  /** The instance's index in the balancer: a copy's from the start, else the attempt step's choice (-1 until then). */
  instance: number;
  /** The try's first copy: this attempt itself, or the one a copy backs up. */
  readonly first: Attempt;
  readonly call: Call;
  /** The dependency: asked, when the read timeout is due, whether anything could follow. */
  readonly ctx: DependencyContext;
  // The try's bound, computed once per try by `Attempt.forTry` (on the first copy; a hedge copy
  // reads its first's; a retry sent beside has its own): every attempt of the try ends by it.
  /** The try's number in the call: 1 for the first (a requeue is not a try of its own). */
  tryNumber = 1;
  /** Time left before the call's deadline when the try started, ms. */
  remainingMs = 0;
  /** The try's attempt timeout: the read timeout, or the time left when that is shorter (at least 1 ms). */
  tryTimeoutMs = 0;
  /** End of the try's attempts, epoch ms (0: none of its own, the first copy's). */
  tryDueAt = 0;
  /** The deadline, not the read timeout, sets {@link Attempt.tryDueAt}. */
  tryByDeadline = false;
  /**
   * A retry the budget already granted, taken by the attempt step when it cut this try's attempt at
   * its read timeout so that a retry would follow (`lastAttempt: 'deadline'`, `reserveRetryAfter`):
   * the retry step spends it instead of asking the budget again, so that attempts timing out together
   * are not cut for retries the budget then refuses.
   */
  retryReserved = false;
  /**
   * (On the first copy.) The copy that gave the try's answer — the first or the hedge copy — or null
   * while none has: see {@link Attempt.claim}, the one winner rule.
   */
  winner: Attempt | null = null;
  /** (On the first copy.) The hedge step's referee of the try's copies, when it made one. */
  referee: TryReferee | null = null;
  /** How the attempt step judged the error this attempt failed with (null until then, and on an answer). */
  failure: ErrorVerdict | null = null;
  aborted = false;
  reason: unknown = undefined;
  /** End of this attempt's own bound, epoch ms: the try's, until it waits past its read timeout. */
  dueAt = 0;
  /** The deadline, not the read timeout, ends this attempt. */
  byDeadline = false;
  timeoutMs = 0;
  done = false;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  /** The balancer chose the instance (and hears the outcome); false when the fleet has one. */
  picked = false;
  /** The attempt's number in the call, from 1 once started (0 before). */
  number = 0;
  startMs = 0;
  origin = '';
  requestHeaders: string[] = NO_HEADERS;
  // The attempt's line in the call's ledger (`ledger.ts`): plain numbers, read only when the ledger is.
  writtenMs = -1;
  endMs = -1;
  bodyEndMs = -1;
  status = 0;
  outcome: AttemptTiming['outcome'] = null;
  serverTiming: unknown = undefined;
  reading: HopReading | null = null;
  /** Counted into the dependency's slow share at its read timeout (not again at its end). */
  slowNoted = false;
  #listener: AbortListener | null = null;
  /** The error judged in {@link Attempt.failure}. */
  #error: unknown = undefined;
  /** (On the first copy.) The hedge copy, or the retry sent beside, once the hedge step has made one. */
  #copy: Attempt | null = null;

  constructor(
    ctx: DependencyContext,
    call: Call,
    kind: AttemptKind,
    instance = -1,
    first: Attempt | null = null,
  ) {
    super();
    this.ctx = ctx;
    this.call = call;
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
   * The first copy of try number `tryNumber` of `call`, started at `nowMs`: the one place the try's
   * bound is computed (the read timeout in force, or the time left before the deadline).
   */
  static forTry(
    ctx: DependencyContext,
    call: Call,
    kind: 'original' | 'retry',
    tryNumber: number,
    nowMs: number,
  ): Attempt {
    const attempt = new Attempt(ctx, call, kind);
    attempt.tryNumber = tryNumber;
    return attempt.#bound(nowMs, call.limitMs, ctx.policy.readMs);
  }

  /**
   * The retry sent beside `first`'s attempt at its read timeout, to `instance`
   * (`TryReferee.sendBeside`): a copy of the try with a bound of its own, the deadline — no copy
   * follows it, so nothing would be sent in its place.
   */
  static beside(first: Attempt, instance: number, nowMs: number): Attempt {
    const attempt = new Attempt(first.ctx, first.call, 'retry', instance, first);
    attempt.tryNumber = first.tryNumber;
    return attempt.#bound(nowMs, first.call.limitMs, Number.POSITIVE_INFINITY);
  }

  /** A hedge copy of `first`'s try, to `instance`: it ends by the try's bound. */
  static hedge(first: Attempt, instance: number): Attempt {
    return new Attempt(first.ctx, first.call, 'hedge', instance, first);
  }

  #bound(nowMs: number, limitMs: number, readMs: number): Attempt {
    const remaining = limitMs - nowMs;
    this.remainingMs = remaining;
    if (remaining <= readMs) {
      this.tryTimeoutMs = Math.max(remaining, 1);
      this.tryByDeadline = true;
    } else {
      this.tryTimeoutMs = readMs;
    }
    this.tryDueAt = nowMs + this.tryTimeoutMs;
    return this;
  }

  /**
   * The attempt step starts this attempt at `startMs`: on `instance` (`picked` by the balancer),
   * `origin`, with `headers`, as the call's attempt `number`; it ends by its try's bound. One aborted
   * before it starts is sent aborted: the transport drops it unsent.
   */
  start(
    instance: number,
    picked: boolean,
    origin: string,
    headers: string[],
    number: number,
    startMs: number,
  ): void {
    this.instance = instance;
    this.picked = picked;
    this.origin = origin;
    this.requestHeaders = headers;
    this.number = number;
    this.startMs = startMs;
    // Every attempt of a try, a hedge copy too, ends with the try's bound (`Attempt.forTry`); a
    // retry sent beside the try's attempt has its own (`Attempt.beside`).
    const bound = this.tryDueAt === 0 ? this.first : this;
    this.dueAt = bound.tryDueAt;
    this.byDeadline = bound.tryByDeadline;
    this.timeoutMs = bound.tryTimeoutMs;
  }

  /** The attempt step has started it. */
  get started(): boolean {
    return this.number !== 0;
  }

  get tryFirst(): AttemptTiming | null {
    const first = this.first;
    return first.started ? first : null;
  }

  /** (On the first copy.) The try's attempt started last: the hedge copy's once it is sent. */
  get lastSent(): Attempt | null {
    const copy = this.#copy;
    if (copy?.started) return copy;
    return this.started ? this : null;
  }

  /**
   * The one rule of who wins a try, applied by the attempt step as each answer comes in: the first
   * attempt of the try to get a final answer (below 400, or one no retry would change) wins it. Returns
   * whether this attempt, answered with a final status, won (the `won` of `attempt-end`); the hedge
   * step then answers the try with the winner's response.
   */
  claim(): boolean {
    const first = this.first;
    if (first.winner !== null) return false;
    first.winner = this;
    return true;
  }

  /** The attempt step judged `error`, the failure of this attempt, as `verdict`. */
  failed(error: unknown, verdict: ErrorVerdict): void {
    this.#error = error;
    this.failure = verdict;
  }

  /**
   * (On the first copy.) How the attempt step judged `error`, when it is what one copy of the try
   * failed with (the try rejects with the error of either copy); null for any other error.
   */
  verdictOf(error: unknown): ErrorVerdict | null {
    if (this.failure !== null && this.#error === error) return this.failure;
    const copy = this.#copy;
    if (copy !== null && copy.failure !== null && copy.#error === error) return copy.failure;
    return null;
  }

  /** The call was cancelled during the try: aborts every copy of it (this is the try's first). */
  interrupt(reason: Error): void {
    this.abort(reason);
    this.#copy?.abort(reason);
  }

  get transportTimeoutMs(): number {
    // The transport's own timers are a safety net past the latest prazo ends the attempt itself (its
    // read timeout, or the deadline when prazo may let it wait past that: `onDue`), by a margin
    // undici's coarse timers cannot eat into (TRANSPORT_MARGIN_MS).
    let boundMs = this.timeoutMs;
    if (this.ctx.lastAttempt === 'deadline' && !this.byDeadline) {
      const leftMs = this.call.limitMs - this.startMs;
      if (Number.isFinite(leftMs) && leftMs > boundMs) boundMs = Math.ceil(leftMs);
    }
    return transportBoundMs(boundMs);
  }

  /** The transport handed the request to a connection: the connect phase is over. */
  written(): void {
    this.writtenMs = this.call.ledger.clock.now();
  }

  get method(): string {
    return this.call.method;
  }

  get path(): string {
    return this.call.path;
  }

  get requestBody(): RequestBody | undefined {
    return this.call.body;
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    this.#listener = listener;
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    if (this.#listener === listener) this.#listener = null;
  }

  /**
   * Aborts the attempt with `reason` (the error its transport fails it with); no-op once it is
   * done. One not started yet is started aborted: the transport drops it unsent.
   */
  abort(reason: unknown): void {
    if (this.aborted || this.done) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.#listener;
    this.#listener = null;
    if (typeof listener === 'function') listener();
    else if (listener !== null) listener.handleEvent();
  }

  /**
   * The dependency closed during the attempt: the call is cancelled with `error`, as by its caller
   * (`Call.cancel`: what the call waits on, this try, is interrupted, which aborts this attempt).
   */
  onClose(error: Error): void {
    this.call.cancel(error);
    this.abort(error);
  }

  /** The shared timer says time is up. */
  onDue(nowMs: number): void {
    const limitMs = this.call.limitMs;
    if (
      this.ctx.lastAttempt === 'deadline' &&
      !this.byDeadline &&
      limitMs > nowMs &&
      Number.isFinite(limitMs) &&
      this.#waitsPastReadTimeout(nowMs)
    ) {
      this.byDeadline = true;
      this.timeoutMs = limitMs - this.startMs;
      this.dueAt = limitMs;
      this.ctx.timer.add(this);
      return;
    }
    this.abort(
      this.byDeadline
        ? new DeadlineExceededError(`Deadline exceeded after ${this.timeoutMs} ms of attempt ${this.number}.`)
        : new ReadTimeoutError(
            `No answer within the ${this.timeoutMs} ms read timeout (attempt ${this.number}).`,
            {
              timeoutMs: this.timeoutMs,
            },
          ),
    );
  }

  /**
   * (`lastAttempt: 'deadline'`, at the read timeout.) Whether this attempt keeps waiting, until the
   * deadline, rather than being cut. Abandoned, it would still load the dependency — and keep its
   * place in the dependency's queue for nobody — so it is cut only for a retry that cannot be sent
   * beside it (a PUT or DELETE, never two in flight; no second instance; no concurrency slot free).
   * It waits when another copy of the try is in flight (the first answer wins), when no retry could
   * follow it (`reserveRetryAfter`), and when the retry went out beside it (`TryReferee.sendBeside`).
   */
  #waitsPastReadTimeout(nowMs: number): boolean {
    const ctx = this.ctx;
    // Past its read timeout, the attempt is slow whatever comes of it: counted now, not at its end.
    noteSlow(ctx, true);
    this.slowNoted = true;
    const referee = this.first.referee;
    if (referee?.copyInFlight) return true;
    // A pinned write's retry would go back to this instance, which is running this very request.
    if (this.call.pinned) return true;
    if (!reserveRetryAfter(ctx, this, nowMs)) return true;
    return referee?.sendBeside(nowMs) === true;
  }
}

/**
 * Whether a retry could follow `attempt` if it were abandoned at its read timeout now, and if so
 * takes that retry from the budget at once (`Attempt.retryReserved` on the try's first copy: the
 * retry step spends it), so
 * that attempts timing out together are not cut for retries a shared budget then refuses. A retry
 * could follow when the call's failure would be retryable (a replayable, idempotent call), attempts
 * are left, the deadline holds the dependency's p99 after now, the concurrency limit would allow a
 * retry beside the abandoned work, the dependency is not slow as a whole (`slowAsAWhole`), and the
 * budget grants it. An attempt abandoned when none could follow buys a failure a read timeout
 * sooner, at the price of work the dependency does for nobody and of an answer the caller might
 * have had: a dependency that queues (every instance slower together, as under overload) answers
 * after the read timeout but before the deadline.
 */
export function reserveRetryAfter(ctx: DependencyContext, attempt: Attempt, nowMs: number): boolean {
  const call = attempt.call;
  const tryFirst = attempt.first;
  if (call.cancelled !== null || ctx.closed) return true;
  if (!call.replayable || !call.idempotent) return false;
  if (tryFirst.tryNumber >= ctx.policy.attempts) return false;
  if (call.limitMs - nowMs < ctx.live.p99Ms) return false;
  // The retry step's own guard (retry.ts), with this attempt counted as abandoned.
  if (ctx.concurrency?.pastLimitWithAbandoned(1)) return false;
  // A retry would wait in the same queue behind this attempt's work.
  if (slowAsAWhole(ctx)) return false;
  if (tryFirst.retryReserved) return true;
  if (!ctx.budget.tryConsume()) return false;
  tryFirst.retryReserved = true;
  return true;
}

/** Counts one finished attempt into {@link DependencyContext.slowShare}. */
function noteSlow(ctx: DependencyContext, slow: boolean): void {
  ctx.slowShare += ((slow ? 1 : 0) - ctx.slowShare) / SLOW_SHARE_SPAN;
}

/** Shared reason for losing hedge copies: nobody reads its stack, and `new Error()` costs ~4 µs. */
export const HEDGE_LOST = new AttemptAbandonedError('Another copy of the request answered first.');

/**
 * The last step: starts and sends `attempt` and resolves (or rejects) with its own outcome. It
 * chooses the instance (the balancer: `pick` for an original, `pickRetry` after a failure; a copy
 * names its instance), bounds the attempt by min(read timeout, remaining deadline) on the shared
 * timer (a hedge copy shares the end of the try it backs up: that of the try's first attempt), sends
 * the deadline and attempt headers, records the latency in the live window and reports the attempt,
 * to the events and to the balancer (outcome and latency). A failure is judged here, once
 * (`judgeError`), and the verdict is left on the attempt for the steps above (`attempt.failure`).
 */
export function attemptHandler(ctx: DependencyContext): TryHandler {
  const events: AttemptEvents = {
    headers: ctx.events.slot('attempt-headers'),
    start: ctx.events.slot('attempt-start'),
    end: ctx.events.slot('attempt-end'),
  };
  return (call, attempt, nowMs, out) => runAttempt(ctx, events, call, attempt, nowMs, out);
}

/** The events of every attempt, looked up once (see `EventHub.slot`). */
interface AttemptEvents {
  readonly headers: EventSlot;
  readonly start: EventSlot;
  readonly end: EventSlot;
}

/**
 * Sends the attempt and settles `out` with its outcome, on the turn after the transport's: the
 * one `.then()` of the call's usual path. The answer is taken up after undici's parser has run
 * (a small body has arrived whole by then, and needs no body-deadline watch), `out` is never
 * settled from inside this function (see `Outcome`), and everything that follows — the events,
 * a retry — runs in the async context the attempt was sent in, as the `.then()` was attached then. Not an `async` function: on the success path
 * a suspended async frame (its registers and its await closures: with the rest of this step it was
 * ≈ 1.5 KB a call, against ≈ 0.7 KB now) costs more than the one `.then()` below, and every
 * allocated byte is paid again by the young-generation collector.
 */
function runAttempt(
  ctx: DependencyContext,
  events: AttemptEvents,
  call: Call,
  attempt: Attempt,
  now: number,
  out: Outcome,
): void {
  let sent: Promise<TransportResponse> | null;
  try {
    sent = sendAttempt(ctx, events, call, attempt, now, out);
  } catch (error) {
    failLater(out, error);
    return;
  }
  if (sent === null) return;
  sent.then(
    (res) => {
      let response: DependencyResponse;
      try {
        response = attemptAnswered(ctx, events.end, attempt, res);
      } catch (error) {
        out.failed(attemptFailed(ctx, events.end, attempt, error));
        return;
      }
      out.answered(response);
    },
    (error: unknown) => {
      out.failed(attemptFailed(ctx, events.end, attempt, error));
    },
  );
}

/**
 * Starts the attempt (its instance, headers and number, on the shared timer) and hands it to the
 * transport: the promise of its answer, or null when it could not be sent (no instance left, the
 * transport threw), its failure already judged and on its way to `out`.
 */
function sendAttempt(
  ctx: DependencyContext,
  events: AttemptEvents,
  call: Call,
  attempt: Attempt,
  now: number,
  out: Outcome,
): Promise<TransportResponse> | null {
  const kind = attempt.kind;
  const balancer = ctx.balancer;
  let instance = attempt.instance;
  let picked = true;
  // A copy names its instance (the hedge step chose it with the balancer).
  if (instance === -1) {
    if (ctx.sole !== -1) {
      // One instance: nothing to choose and nothing to eject; the balancer is skipped.
      instance = ctx.sole;
      picked = false;
    } else {
      instance =
        kind === 'original'
          ? balancer.pick(now)
          : call.pinnedOrigin === null
            ? balancer.pickRetry(call.failedOn ?? NONE_FAILED, now)
            : pickPinned(balancer, call.pinnedOrigin, call, now);
      if (instance === -1) {
        const error = new RequestFailedError(`${ctx.name}: no instance left in the fleet.`, {
          phase: 'connect',
        });
        attempt.failed(error, judgeError(error, call.classifyContext(now)));
        failLater(out, error);
        return null;
      }
    }
  }
  const number = call.nextAttempt();
  const origin = balancer.origin(instance)!;
  const pairs = call.headerPairs;
  // One array, of its final length: `concat` made a second one (in a client process on the global
  // `fetch` a CPU profile put it at ≈ 2 µs a call, ≈ 0.1 µs in a bare process), and appending to a
  // four-item literal moved its items once (BENCHMARKS.md).
  const count = pairs === null ? 0 : pairs.length;
  const headers = new Array<string>(4 + count);
  headers[0] = DEADLINE_HEADER;
  headers[1] = call.limitHeader;
  headers[2] = ATTEMPT_HEADER;
  headers[3] = attemptHeaderValue(number, kind);
  for (let i = 0; i < count; i++) headers[4 + i] = pairs![i]!;
  if (events.headers.active)
    ctx.events.emit('attempt-headers', {
      dependency: ctx.name,
      requestId: call.id,
      attempt: number,
      kind,
      method: call.method,
      instance: origin,
      path: call.path,
      headers,
    });
  attempt.start(instance, picked, origin, headers, number, now);
  ctx.timer.add(attempt);
  call.ledger.sent(attempt);
  if (events.start.active) {
    ctx.events.emit('attempt-start', {
      dependency: ctx.name,
      requestId: call.id,
      attempt: number,
      kind,
      instance: origin,
    });
  }
  try {
    return ctx.transport.send(attempt, attempt);
  } catch (error) {
    failLater(out, attemptFailed(ctx, events.end, attempt, error));
    return null;
  }
}

/**
 * The instance a retry of a pinned call goes back to (`origin`, its `Call.pinnedOrigin`), or the
 * balancer's choice when that instance has left the fleet.
 */
function pickPinned(
  balancer: DependencyContext['balancer'],
  origin: string,
  call: Call,
  nowMs: number,
): number {
  const again = balancer.pickAgain(origin, nowMs);
  return again !== -1 ? again : balancer.pickRetry(call.failedOn ?? NONE_FAILED, nowMs);
}

/** The attempt is over (answered or failed): it leaves the shared timer. Returns when it ended. */
function endAttempt(ctx: DependencyContext, attempt: Attempt): number {
  attempt.done = true;
  ctx.timer.delete(attempt);
  return ctx.clock.now();
}

/** The instance answered `res`: records the attempt and returns the try's response. */
function attemptAnswered(
  ctx: DependencyContext,
  endEvent: EventSlot,
  attempt: Attempt,
  res: TransportResponse,
): DependencyResponse {
  const call = attempt.call;
  const instance = attempt.instance;
  const number = attempt.number;
  const kind = attempt.kind;
  const origin = attempt.origin;
  const end = endAttempt(ctx, attempt);
  const status = res.statusCode;
  const durationMs = end - attempt.startMs;
  attempt.endMs = end;
  attempt.status = status;
  attempt.serverTiming = res.headers[SERVER_TIMING_HEADER];
  const verdict = judgeStatus(status);
  ctx.live.record(durationMs, verdict.failed, end);
  ctx.concurrency?.answered(end);
  if (!attempt.slowNoted) noteSlow(ctx, durationMs > ctx.policy.readMs);
  if (attempt.picked)
    ctx.balancer.finished(
      instance,
      instanceOutcomeOfAttempt(status, null, undefined, false, false),
      durationMs,
      end,
    );
  // "success" means "final": below 400, or a status no retry would change (404, 422 …).
  const success = verdict.kind !== 'retryable';
  if (!success) call.noteFailure(instance);
  // Answered: what the instance did with the write is known, and a retry may go anywhere.
  if (call.pinned) call.pinTo(null);
  const won = success && attempt.claim();
  attempt.outcome = success ? 'success' : 'failure';
  call.recordAttempt({
    attempt: number,
    instance: origin,
    kind,
    phase: 'response',
    durationMs,
    outcome: success ? 'success' : 'failure',
    status,
  });
  if (endEvent.active) {
    ctx.events.emit('attempt-end', {
      dependency: ctx.name,
      requestId: call.id,
      attempt: number,
      kind,
      instance: origin,
      durationMs,
      outcome: success ? 'success' : 'failure',
      status,
      phase: 'response',
      won,
      leftMs: call.limitMs - attempt.startMs,
      ...(attempt.writtenMs === -1 ? {} : { connectMs: attempt.writtenMs - attempt.startMs }),
    });
  }
  guardBody(ctx, call, attempt, res.body);
  return { status, headers: res.headers, body: res.body, attempts: call.attempts, ledger: call.ledger };
}

/** The attempt failed with `error`: judges and records it, and returns the error to reject with. */
function attemptFailed(
  ctx: DependencyContext,
  endEvent: EventSlot,
  attempt: Attempt,
  error: unknown,
): unknown {
  const call = attempt.call;
  const instance = attempt.instance;
  const end = endAttempt(ctx, attempt);
  const durationMs = end - attempt.startMs;
  const abandoned =
    error instanceof AttemptAbandonedError || (call.cancelled !== null && error === call.cancelled);
  attempt.endMs = end;
  attempt.outcome = abandoned ? 'aborted' : 'failure';
  const verdict = judgeError(error, call.classifyContext(end));
  attempt.failed(error, verdict);
  const classification = verdict.classification;
  const errorCode = verdict.code;
  const timeout = verdict.timeout;
  if (attempt.picked)
    ctx.balancer.finished(
      instance,
      instanceOutcomeOfAttempt(0, classification, timeout, abandoned, attempt.byDeadline),
      durationMs,
      end,
    );
  // Work the client gave up on that the dependency may still be doing: it keeps loading the
  // concurrency limit, and a timeout is a drop (see `ConcurrencyGate.abandon`).
  const gate = ctx.concurrency;
  if (gate !== null && !ctx.closed && classification.phase !== 'connect') {
    const reason = attempt.reason;
    const timedOut =
      timeout === 'read' ||
      (attempt.aborted && (reason instanceof ReadTimeoutError || reason instanceof DeadlineExceededError));
    if (timedOut || abandoned)
      gate.abandon(timedOut, durationMs, attempt.startMs, end, ctx.policy.readMs, instance);
  }
  // A pinned write that may have been written: its retry goes back to this instance.
  if (call.pinned) call.pinTo(classification.phase === 'connect' ? null : attempt.origin);
  if (!abandoned) {
    if (!attempt.slowNoted) noteSlow(ctx, timeout === 'read' || attempt.byDeadline);
    call.noteFailure(instance);
    // A timeout cut by prazo says nothing about the latency distribution, only that it failed.
    ctx.live.record(undefined, true, end);
  } else if (attempt.reason === HEDGE_LOST && attempt.first === attempt) {
    // The try's first copy, overtaken by its hedge: it was at least this slow (a censored sample).
    // Left out, the slow calls hedging cuts would leave the window, whose p95 — the hedge delay —
    // would then be the fast calls' alone: lower, and more copies sent (docs/client.md, Hedging).
    ctx.live.record(durationMs, false, end);
  }
  const record: AttemptRecordDraft = {
    attempt: attempt.number,
    instance: attempt.origin,
    kind: attempt.kind,
    phase: classification.phase,
    durationMs,
    outcome: abandoned ? 'aborted' : 'failure',
  };
  if (errorCode !== undefined) record.errorCode = errorCode;
  call.recordAttempt(record);
  if (endEvent.active) {
    ctx.events.emit('attempt-end', {
      ...record,
      dependency: ctx.name,
      requestId: call.id,
      ...(timeout === undefined ? {} : { timeout }),
      won: false,
      leftMs: call.limitMs - attempt.startMs,
      ...(attempt.writtenMs === -1 ? {} : { connectMs: attempt.writtenMs - attempt.startMs }),
    });
  }
  return error;
}

type AttemptRecordDraft = DependencyResponse['attempts'][number] & { errorCode?: string };
