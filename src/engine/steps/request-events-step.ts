import { isPrazoError } from '../../errors.js';
import { judgeStatus } from '../../policy/classify.js';
import type { Call, DependencyResponse } from '../call.js';
import type { DependencyContext, Handler, Step } from '../pipeline.js';

/**
 * Emits `request-start` and `request-end`. When nobody listens to `request-end` it adds nothing to
 * the call (no extra promise).
 */
export function requestEventsStep(ctx: DependencyContext): Step {
  const events = ctx.events;
  const start = events.slot('request-start');
  const end = events.slot('request-end');
  return (next) => (call, nowMs) => {
    if (start.active)
      events.emit('request-start', {
        dependency: ctx.name,
        requestId: call.id,
        method: call.method,
        idempotent: call.idempotent,
        remainingMs: call.limitMs - call.startMs,
      });
    if (!end.active) return next(call, nowMs);
    return observed(ctx, call, next, nowMs);
  };
}

// `.then()` with a handler per outcome rather than an async function: a suspended async frame (its
// registers and await closures) allocates more than the two closures.
function observed(
  ctx: DependencyContext,
  call: Call,
  next: Handler,
  nowMs: number,
): Promise<DependencyResponse> {
  let sent: Promise<DependencyResponse>;
  try {
    sent = next(call, nowMs);
  } catch (error) {
    ended(ctx, call, undefined, error);
    return Promise.reject(error);
  }
  return sent.then(
    (response) => {
      ended(ctx, call, response, undefined);
      return response;
    },
    (error: unknown) => {
      ended(ctx, call, undefined, error);
      throw error;
    },
  );
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
