import type { TimerEntry } from '../../coarse-timer.js';
import { DeadlineExceededError } from '../../errors.js';
import { type BodyWatch, IncomingBody } from '../../transport/incoming-body.js';
import type { Call } from '../call.js';
import type { AttemptTiming } from '../ledger.js';
import type { DependencyContext } from '../pipeline.js';
import type { ResponseBody } from '../response.js';

/**
 * Holds a response body to the call's deadline. The attempt's timer stops at the response headers,
 * but the connection stays taken until the body has been read: a body that drips (or a caller that
 * never reads it) would hold it past the deadline, which is exactly what a deadline is for. At the
 * deadline the body is destroyed with `DEADLINE_EXCEEDED` — the caller's read rejects, and the
 * connection is released. The body leaves the shared timer as soon as it ends or fails (no listener,
 * no closure). Bodies of other transports (a test's fake) hold no connection and are not guarded.
 */
export function guardBody(
  ctx: DependencyContext,
  call: Call,
  attempt: AttemptTiming,
  body: ResponseBody,
): void {
  if (!(body instanceof IncomingBody)) return;
  // A small body has usually arrived with the headers: it ended when they did, and holds nothing.
  if (!body.open) attempt.bodyEndMs = attempt.endMs;
  else body.watch(ctx.timer, new BodyDeadline(ctx, call.limitMs, body, attempt));
}

/** The shared-timer entry that destroys a body still open at the call's deadline. */
class BodyDeadline implements BodyWatch {
  readonly dueAt: number;
  timerPrev: TimerEntry | null = null;
  timerNext: TimerEntry | null = null;
  readonly #ctx: DependencyContext;
  readonly #body: IncomingBody;
  readonly #attempt: AttemptTiming;

  constructor(ctx: DependencyContext, dueAt: number, body: IncomingBody, attempt: AttemptTiming) {
    this.#ctx = ctx;
    this.dueAt = dueAt;
    this.#body = body;
    this.#attempt = attempt;
  }

  /** The body ended or failed: the end of the attempt's body phase in the ledger. */
  unwatched(): void {
    this.#attempt.bodyEndMs = this.#ctx.clock.now();
  }

  onDue(): void {
    this.#body.destroy(
      new DeadlineExceededError(`Deadline exceeded while reading the response body of ${this.#ctx.name}.`),
    );
  }
}
