import type { TimerEntry } from '../../coarse-timer.js';
import {
  AttemptAbandonedError,
  DeadlineExceededError,
  ReadTimeoutError,
  RequestFailedError,
} from '../../errors.js';
import { judgeError, judgeStatus } from '../../policy/classify.js';
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
import type { AttemptInFlight, AttemptPlan } from '../attempt-plan.js';
import type { Call, DependencyResponse } from '../call.js';
import type { EventSlot } from '../events.js';
import { instanceOutcomeOfAttempt } from '../instance-report.js';
import type { AttemptTiming } from '../ledger.js';
import { type DependencyContext, SLOW_SHARE_SPAN, slowAsAWhole, type TryHandler } from '../pipeline.js';
import { guardBody } from './body-deadline.js';

const NONE_FAILED: readonly number[] = Object.freeze([]);

/**
 * One attempt in flight. It is at once the request handed to the transport, the signal that
 * aborts it (an `AbortSignal` costs microseconds to create and to listen to; undici only needs
 * `aborted`, `reason` and one listener) and the entry of the shared coarse timer that enforces its
 * timeout: one object per attempt. What the call or the plan already holds (method, path, body,
 * kind) is read from them rather than copied: every field is paid on every attempt.
 */
export class Attempt implements OutgoingRequest, AbortLike, TimerEntry, AttemptInFlight, AttemptTiming {
  aborted = false;
  reason: unknown = undefined;
  dueAt = 0;
  /** The deadline, not the read timeout, ends this attempt. */
  byDeadline = false;
  timeoutMs = 0;
  done = false;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  readonly call: Call;
  /** The plan the attempt was sent for. */
  readonly plan: AttemptPlan;
  readonly instance: number;
  /** The balancer chose the instance (and hears the outcome); false when the fleet has one. */
  readonly picked: boolean;
  readonly number: number;
  readonly startMs: number;
  readonly origin: string;
  readonly headers: string[];
  /** The dependency: asked, when the read timeout is due, whether anything could follow. */
  readonly ctx: DependencyContext;
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

  constructor(
    ctx: DependencyContext,
    call: Call,
    plan: AttemptPlan,
    instance: number,
    picked: boolean,
    origin: string,
    headers: string[],
    number: number,
    startMs: number,
  ) {
    this.ctx = ctx;
    this.call = call;
    this.plan = plan;
    this.instance = instance;
    this.picked = picked;
    this.origin = origin;
    this.headers = headers;
    this.number = number;
    this.startMs = startMs;
  }

  get tryFirst(): AttemptTiming | null {
    return this.plan.first.attempt as Attempt | null;
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

  get kind(): AttemptKind {
    return this.plan.kind;
  }

  get method(): string {
    return this.call.method;
  }

  get path(): string {
    return this.call.path;
  }

  get body(): RequestBody | undefined {
    return this.call.body;
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    this.#listener = listener;
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    if (this.#listener === listener) this.#listener = null;
  }

  /** Aborts the attempt with `reason` (the error its transport promise rejects with). */
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
    const referee = this.plan.first.referee;
    if (referee?.copyInFlight) return true;
    // A pinned write's retry would go back to this instance, which is running this very request.
    if (this.call.pinned) return true;
    if (!reserveRetryAfter(ctx, this, nowMs)) return true;
    return referee?.sendBeside(nowMs) === true;
  }
}

/**
 * Whether a retry could follow `attempt` if it were abandoned at its read timeout now, and if so
 * takes that retry from the budget at once (`AttemptPlan.retryReserved` on the try's plan: the
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
  const tryPlan = attempt.plan.first;
  if (call.cancelled !== null || ctx.closed) return true;
  if (!call.replayable || !call.idempotent) return false;
  if (tryPlan.tryNumber >= ctx.policy.attempts) return false;
  if (call.limitMs - nowMs < ctx.live.p99Ms) return false;
  // The retry step's own guard (retry.ts), with this attempt counted as abandoned.
  if (ctx.concurrency?.pastLimitWithAbandoned(1)) return false;
  // A retry would wait in the same queue behind this attempt's work.
  if (slowAsAWhole(ctx)) return false;
  if (tryPlan.retryReserved) return true;
  if (!ctx.budget.tryConsume()) return false;
  tryPlan.retryReserved = true;
  return true;
}

/** Counts one finished attempt into {@link DependencyContext.slowShare}. */
function noteSlow(ctx: DependencyContext, slow: boolean): void {
  ctx.slowShare += ((slow ? 1 : 0) - ctx.slowShare) / SLOW_SHARE_SPAN;
}

/** Shared reason for losing hedge copies: nobody reads its stack, and `new Error()` costs ~4 µs. */
export const HEDGE_LOST = new AttemptAbandonedError('Another copy of the request answered first.');

/**
 * The last step: sends the attempt `plan` asks for and resolves (or rejects) with its own outcome.
 * It chooses the instance (the balancer: `pick` for an original, `pickRetry` after a failure; a
 * hedge copy's plan names its instance), bounds the attempt by min(read timeout, remaining deadline)
 * on the shared timer (a hedge copy shares the end of the try it backs up: that of the try's first
 * attempt), registers the attempt on its plan (the abort handle of the step that made the plan), sends
 * the deadline and attempt headers, records the latency in the live window and reports the attempt,
 * to the events and to the balancer (outcome and latency). A failure is judged here, once
 * (`judgeError`), and the verdict is left on the plan for the steps above (`plan.failure`).
 */
export function attemptHandler(ctx: DependencyContext): TryHandler {
  const events: AttemptEvents = {
    headers: ctx.events.slot('attempt-headers'),
    start: ctx.events.slot('attempt-start'),
    end: ctx.events.slot('attempt-end'),
  };
  return (call, plan, nowMs) => runAttempt(ctx, events, call, plan, nowMs);
}

/** The events of every attempt, looked up once (see `EventHub.slot`). */
interface AttemptEvents {
  readonly headers: EventSlot;
  readonly start: EventSlot;
  readonly end: EventSlot;
}

/**
 * Sends the attempt and settles with its outcome. Not an `async` function: on the success path a
 * suspended async frame (its registers and its await closures: with the rest of this step it was
 * ≈ 1.5 KB a call, against ≈ 0.7 KB now) costs more than the one `.then()` below, and every
 * allocated byte is paid again by the young-generation collector.
 * The behaviour is an async function's all the same: nothing here throws synchronously, and an
 * exception in the bookkeeping after the answer is handled as the attempt's failure.
 */
function runAttempt(
  ctx: DependencyContext,
  events: AttemptEvents,
  call: Call,
  plan: AttemptPlan,
  now: number,
): Promise<DependencyResponse> {
  try {
    const kind = plan.kind;
    const balancer = ctx.balancer;
    let instance = plan.instance;
    let picked = true;
    // A hedge copy's plan names its instance (the hedge step chose it with the balancer).
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
          plan.failed(error, judgeError(error, call.classifyContext(now)));
          return Promise.reject(error);
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
    const attempt = new Attempt(ctx, call, plan, instance, picked, origin, headers, number, now);
    // Every attempt of a try, a hedge copy too, ends with the try's bound (`AttemptPlan.forTry`);
    // a retry sent beside the try's attempt has its own (`AttemptPlan.beside`).
    const bound = plan.dueAt === 0 ? plan.first : plan;
    attempt.dueAt = bound.dueAt;
    attempt.byDeadline = bound.byDeadline;
    attempt.timeoutMs = bound.timeoutMs;
    ctx.timer.add(attempt);
    plan.sent(attempt);
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
    let sent: Promise<TransportResponse>;
    try {
      sent = ctx.transport.send(attempt, attempt);
    } catch (error) {
      return Promise.reject(attemptFailed(ctx, events.end, attempt, error));
    }
    return sent.then(
      (res) => {
        try {
          return attemptAnswered(ctx, events.end, attempt, res);
        } catch (error) {
          throw attemptFailed(ctx, events.end, attempt, error);
        }
      },
      (error: unknown) => {
        throw attemptFailed(ctx, events.end, attempt, error);
      },
    );
  } catch (error) {
    return Promise.reject(error);
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
  const won = success && attempt.plan.claim();
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
  attempt.plan.failed(error, verdict);
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
  } else if (attempt.reason === HEDGE_LOST && attempt.plan.first === attempt.plan) {
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
