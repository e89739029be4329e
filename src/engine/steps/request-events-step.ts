import { isPrazoError } from '../../errors.js';
import { judgeStatus } from '../../policy/classify.js';
import type { Call, DependencyResponse } from '../call.js';
import {
  type DependencyContext,
  Epilogue,
  failLater,
  type Handler,
  type Outcome,
  type Step,
} from '../pipeline.js';

/**
 * Emits `request-start` and `request-end`. When nobody listens to `request-end` it adds nothing to
 * the call (nothing wraps its outcome).
 */
export function requestEventsStep(ctx: DependencyContext): Step {
  const events = ctx.events;
  const start = events.slot('request-start');
  const end = events.slot('request-end');
  return (next) => (call, nowMs, out) => {
    if (start.active)
      events.emit('request-start', {
        dependency: ctx.name,
        requestId: call.id,
        method: call.method,
        idempotent: call.idempotent,
        remainingMs: call.limitMs - call.startMs,
      });
    if (!end.active) next(call, nowMs, out);
    else observed(ctx, call, next, nowMs, out);
  };
}

/** Sends the call and emits `request-end` as it ends. */
function observed(ctx: DependencyContext, call: Call, next: Handler, nowMs: number, out: Outcome): void {
  try {
    next(call, nowMs, new RequestEnd(ctx, call, out));
  } catch (error) {
    ended(ctx, call, undefined, error);
    failLater(out, error);
  }
}

/** The outcome of a call someone listens to the end of: `request-end` is emitted first. */
class RequestEnd extends Epilogue {
  readonly #ctx: DependencyContext;
  readonly #call: Call;

  constructor(ctx: DependencyContext, call: Call, out: Outcome) {
    super(out);
    this.#ctx = ctx;
    this.#call = call;
  }

  protected ended(response: DependencyResponse | undefined, error: unknown): void {
    ended(this.#ctx, this.#call, response, error);
  }
}

function ended(
  ctx: DependencyContext,
  call: Call,
  response: DependencyResponse | undefined,
  error: unknown,
): void {
  const durationMs = ctx.clock.now() - call.startMs;
  if (response !== undefined) {
    ctx.events.emit('request-end', {
      dependency: ctx.name,
      requestId: call.id,
      outcome: judgeStatus(response.status).failed ? 'failure' : 'success',
      status: response.status,
      durationMs,
      attempts: call.attemptCount,
      ledger: call.ledger,
    });
  } else {
    ctx.events.emit('request-end', {
      dependency: ctx.name,
      requestId: call.id,
      outcome: 'failure',
      code: isPrazoError(error) ? error.code : 'UNKNOWN',
      durationMs,
      attempts: call.attemptCount,
      ledger: call.ledger,
    });
  }
}
