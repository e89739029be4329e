import { isPrazoError } from '../../errors.js';
import type { Call, DependencyResponse } from '../call.js';
import type { DependencyContext, Handler, Step } from '../pipeline.js';

/**
 * Emits `request-start` and `request-end`. When nobody listens to `request-end` it adds nothing to
 * the call (no extra promise).
 */
export function requestEventsStep(ctx: DependencyContext): Step {
  return (next) => (call, nowMs) => {
    const events = ctx.events;
    if (events.has('request-start'))
      events.emit('request-start', {
        dependency: ctx.name,
        requestId: call.id,
        method: call.method,
        idempotent: call.idempotent,
        remainingMs: call.limitMs - call.startMs,
      });
    if (!events.has('request-end')) return next(call, nowMs);
    return observed(ctx, call, next, nowMs);
  };
}

// An async function rather than `.then()` with two closures: one promise, nothing else allocated.
async function observed(
  ctx: DependencyContext,
  call: Call,
  next: Handler,
  nowMs: number,
): Promise<DependencyResponse> {
  try {
    const response = await next(call, nowMs);
    ended(ctx, call, response, undefined);
    return response;
  } catch (error) {
    ended(ctx, call, undefined, error);
    throw error;
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
      outcome: response.status < 500 ? 'success' : 'failure',
      status: response.status,
      durationMs,
      attempts: call.attemptCount,
    });
  } else {
    ctx.events.emit('request-end', {
      dependency: ctx.name,
      requestId: call.id,
      outcome: 'failure',
      code: isPrazoError(error) ? error.code : 'UNKNOWN',
      durationMs,
      attempts: call.attemptCount,
    });
  }
}
