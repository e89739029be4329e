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

/**
 * Marks an abort handle made for one call only (the interceptor's per-request controller): the call
 * listens to it directly, without the sharing above (which would fill and empty a `WeakMap` and a
 * `Set` on every call), and does not stop listening when it settles — such a handle holds one
 * listener and drops it itself once the call has answered or failed. Removing it would take a
 * promise, a reaction, three closures and one more turn of the microtask queue on every call.
 * @internal
 */
export const SINGLE_CALL_SIGNAL: unique symbol = Symbol('prazo.singleCallSignal');

function isSingleCall(signal: AbortSignal): boolean {
  return (signal as { [SINGLE_CALL_SIGNAL]?: true })[SINGLE_CALL_SIGNAL] === true;
}

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
 * Follows the caller's `signal`: when it aborts, what the call waits on is interrupted (every
 * attempt in flight is aborted, a retry delay or a queue ends) and the call fails with `CANCELLED` (never `DEADLINE_EXCEEDED`: the caller gave up, time did not run out).
 * Costs nothing when no signal is given; the call stops following the signal when it settles (a
 * {@link SINGLE_CALL_SIGNAL} excepted), and calls sharing one signal share one listener on it.
 */
export function cancelStep(ctx: DependencyContext): Step {
  return (next) => (call, nowMs) => {
    const signal = call.signal;
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
    if (isSingleCall(signal)) {
      signal.addEventListener('abort', onAbort);
      return next(call, nowMs);
    }
    const unfollow = follow(signal, onAbort);
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
