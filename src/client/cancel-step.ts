import { CancelledError } from '../errors.js';
import type { Call } from './call.js';
import { withHistory } from './history.js';
import type { DependencyContext, Step } from './pipeline.js';

/**
 * The calls following one caller signal. Many concurrent calls often share a signal (one per
 * incoming request, fanned out): one abort listener per signal, not per call, so the signal never
 * collects enough listeners to raise `MaxListenersExceededWarning`.
 */
interface Followers {
  calls: Set<Call>;
  listener: () => void;
}

const followed = new WeakMap<AbortSignal, Followers>();

function follow(signal: AbortSignal, call: Call, name: string): void {
  let followers = followed.get(signal);
  if (followers === undefined) {
    const calls = new Set<Call>();
    const listener = (): void => {
      followed.delete(signal);
      for (const c of calls) cancel(c, signal, name);
      calls.clear();
    };
    followers = { calls, listener };
    followed.set(signal, followers);
    signal.addEventListener('abort', listener, { once: true });
  }
  followers.calls.add(call);
}

function unfollow(signal: AbortSignal, call: Call): void {
  const followers = followed.get(signal);
  if (followers === undefined) return;
  followers.calls.delete(call);
  if (followers.calls.size === 0) {
    followed.delete(signal);
    signal.removeEventListener('abort', followers.listener);
  }
}

function cancel(call: Call, signal: AbortSignal, name: string): void {
  if (call.cancelled !== null) return;
  const error = new CancelledError(`Call to ${name} cancelled by the caller.`, { cause: signal.reason });
  call.cancelled = error;
  call.abortInflight(error);
  call.wake?.();
}

/**
 * Follows the caller's `signal`: when it aborts, every attempt in flight is aborted and the call
 * fails with `CANCELLED` (never `DEADLINE_EXCEEDED`: the caller gave up, time did not run out).
 * Costs nothing when no signal is given; the call stops following the signal when it settles.
 * The signal covers the call up to the response headers; to stop reading a body, destroy it.
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
    follow(signal, call, ctx.name);
    return next(call).finally(() => unfollow(signal, call));
  };
}
