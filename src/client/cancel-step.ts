import { CancelledError } from '../errors.js';
import { withHistory } from './history.js';
import type { DependencyContext, Step } from './pipeline.js';

/**
 * Follows the caller's `signal`: when it aborts, every attempt in flight is aborted and the call
 * fails with `CANCELLED` (never `DEADLINE_EXCEEDED`: the caller gave up, time did not run out).
 * Costs nothing when no signal is given; the listener is removed when the call settles.
 */
export function cancelStep(ctx: DependencyContext): Step {
  return (next) => (call) => {
    const signal = call.signal;
    if (signal === undefined) return next(call);
    if (signal.aborted)
      return Promise.reject(
        withHistory(
          new CancelledError('Cancelled by the caller before the call.', { cause: signal.reason }),
          call,
          ctx.name,
        ),
      );
    const onAbort = (): void => {
      const error = new CancelledError(`Call to ${ctx.name} cancelled by the caller.`, {
        cause: signal.reason,
      });
      call.cancelled = error;
      call.abortInflight(error);
      call.wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    return next(call).finally(() => signal.removeEventListener('abort', onAbort));
  };
}
