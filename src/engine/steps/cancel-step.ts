import { CancelledError } from '../../errors.js';
import { withHistory } from '../history.js';
import { type DependencyContext, Epilogue, failLater, type Outcome, type Step } from '../pipeline.js';

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
  return (next) => (call, nowMs, out) => {
    const signal = call.handle ?? call.signal;
    if (signal === undefined) {
      next(call, nowMs, out);
      return;
    }
    if (signal.aborted) {
      failLater(
        out,
        withHistory(
          new CancelledError('Cancelled by the caller before the call.', { cause: signal.reason }),
          call,
          ctx.name,
        ),
      );
      return;
    }
    const onAbort = (): void => {
      const error = new CancelledError(`Call to ${ctx.name} cancelled by the caller.`, {
        cause: signal.reason,
      });
      call.cancel(error);
    };
    if (call.handle !== undefined) {
      call.handle.addEventListener('abort', onAbort);
      next(call, nowMs, out);
      return;
    }
    const unfollow = follow(signal as AbortSignal, onAbort); // no handle: the caller's signal
    next(call, nowMs, new Unfollow(unfollow, out));
  };
}

/** The outcome of a call that follows its caller's signal: it stops following it first. */
class Unfollow extends Epilogue {
  readonly #unfollow: () => void;

  constructor(unfollow: () => void, out: Outcome) {
    super(out);
    this.#unfollow = unfollow;
  }

  protected ended(): void {
    this.#unfollow();
  }
}
