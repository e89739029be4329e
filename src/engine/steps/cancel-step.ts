import { CancelledError } from '../../errors.js';
import { withHistory } from '../history.js';
import type { DependencyContext, Step } from '../pipeline.js';

/** The calls following one caller signal, behind a single abort listener. */
interface SignalWatch {
  readonly calls: Set<() => void>;
  readonly fire: () => void;
}

// One abort listener per caller signal, however many calls share it: a signal shared by many
// concurrent calls (a server's shutdown signal) would otherwise carry one listener per call in
// flight, and Node warns (MaxListenersExceededWarning) past 10.
const watches = new WeakMap<AbortSignal, SignalWatch>();

function follow(signal: AbortSignal, onAbort: () => void): () => void {
  let watch = watches.get(signal);
  if (watch === undefined) {
    const calls = new Set<() => void>();
    const fire = (): void => {
      watches.delete(signal);
      for (const call of calls) call();
      calls.clear();
    };
    watch = { calls, fire };
    watches.set(signal, watch);
    signal.addEventListener('abort', fire, { once: true });
  }
  const current = watch;
  current.calls.add(onAbort);
  return () => {
    current.calls.delete(onAbort);
    // The last call left: an idle signal keeps nothing of prazo's.
    if (current.calls.size === 0 && watches.get(signal) === current) {
      watches.delete(signal);
      signal.removeEventListener('abort', current.fire);
    }
  };
}

/**
 * Follows the caller's `signal`, or the call's own abort handle: when it aborts, what the call waits
 * on is interrupted (every attempt in flight is aborted, a retry delay or a queue ends) and the call
 * fails with `CANCELLED` (never `DEADLINE_EXCEEDED`: the caller gave up, time did not run out).
 * Costs nothing when neither is given. The call stops following a signal when it settles, and calls
 * sharing one signal share one listener on it; a handle made for the call alone (`CallHandle`) is
 * listened to directly, and drops the listener itself.
 */
export function cancelStep(ctx: DependencyContext): Step {
  return (next) => (call, nowMs) => {
    const signal = call.handle ?? call.signal;
    if (signal === undefined) return next(call, nowMs);
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
      call.cancel(error);
    };
    if (call.handle !== undefined) {
      call.handle.addEventListener('abort', onAbort);
      return next(call, nowMs);
    }
    const unfollow = follow(signal as AbortSignal, onAbort); // no handle: the caller's signal
    // `.then()` with a handler per outcome rather than `.finally()`, which makes two more promises
    // and a closure per call and settles the caller's promise two turns later.
    return next(call, nowMs).then(
      (response) => {
        unfollow();
        return response;
      },
      (error: unknown) => {
        unfollow();
        throw error;
      },
    );
  };
}
