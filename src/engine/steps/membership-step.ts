import { DeadlineExceededError } from '../../errors.js';
import type { OriginPoller } from '../../membership/origin-poller.js';
import type { Call } from '../call.js';
import { closedError, withHistory } from '../history.js';
import { type DependencyContext, type Step, sendOn } from '../pipeline.js';
import { Sleep } from './sleep.js';

/**
 * Holds a call until the resolver of `origins` has answered a first set, for no longer than the
 * call's deadline: a call cannot be sent before there is an instance to send it to. Once the first
 * set is in, it costs one property read. A call whose deadline passes first fails with
 * `DEADLINE_EXCEEDED`, the resolver's last error as `cause`; the caller's cancellation and
 * `close()` end the wait at once.
 */
export function membershipStep(ctx: DependencyContext, poller: OriginPoller): Step {
  return (next) => (call, nowMs, out) => {
    if (poller.ready) next(call, nowMs, out);
    else
      waitForOrigins(ctx, poller, call, nowMs).then(
        () => sendOn(next, call, ctx.clock.now(), out),
        (error: unknown) => out.failed(error),
      );
  };
}

async function waitForOrigins(
  ctx: DependencyContext,
  poller: OriginPoller,
  call: Call,
  nowMs: number,
): Promise<void> {
  const waitMs = call.limitMs - nowMs;
  if (waitMs > 0) {
    const wait = new Sleep(ctx, call, waitMs);
    // Ends this wait only (a no-op once it is over: the call may be waiting for something else by then).
    void poller.whenReady().then(wait.wake);
    await wait.done;
  }
  if (call.cancelled !== null) throw withHistory(call.cancelled, call, ctx.name);
  if (ctx.closed) throw withHistory(closedError(ctx.name), call, ctx.name);
  if (!poller.ready)
    throw withHistory(
      new DeadlineExceededError(
        `${ctx.name}: no instance known before the deadline (the resolver of origins has not answered a usable set yet).`,
        { cause: poller.lastError },
      ),
      call,
      ctx.name,
    );
}
