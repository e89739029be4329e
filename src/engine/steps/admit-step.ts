import { currentHopTally } from '../../deadline/hop-tally.js';
import { DeadlineInsufficientError } from '../../errors.js';
import type { Call } from '../call.js';
import { withHistory } from '../history.js';
import { describeHop } from '../ledger.js';
import { type DependencyContext, failLater, type Outcome, type Step } from '../pipeline.js';

/**
 * Bootstrap probes a dependency may have in flight at once while its p99 is only a starting guess.
 * One is enough to learn (a sequential caller sends every call) and bounds what a wrong guess can
 * cost a dependency that really is slow: one call at a time, each cut at its deadline.
 */
export const BOOTSTRAP_PROBES_IN_FLIGHT = 1;

/**
 * The pre-call check. A call whose remaining deadline cannot hold the dependency's p99 fails at once
 * with `DEADLINE_INSUFFICIENT`, the dependency untouched; it is counted by the retry budget as
 * *refused* (`recordRefused`), never as an original, and the `fast-fail` event says
 * `beforeAttempt: true`.
 *
 * **Bootstrap.** While the p99 in force is a starting value (`latency: 'auto'`, or the live window
 * thinned out to fewer healthy samples than `liveMinSamples`), it is a guess, not a measurement, and
 * a guess alone must not refuse every call — else no call goes out, no sample is recorded, and the
 * guess never changes. So a call that does not fit the guess is still sent as a *probe* when fewer
 * than {@link BOOTSTRAP_PROBES_IN_FLIGHT} probes are in flight and some time is left: it gets one
 * attempt bounded by its deadline, and its latency feeds the window. A measured p99 (a static profile,
 * or the live window) is never probed past; but before refusing, the step re-reads the window when
 * its last reading is older than `liveRefreshMs` (nothing else would, since a refused call records
 * nothing), so a p99 measured in a slow period gives way to the starting value once it ages out.
 *
 * @see The source article, "falhar rápido antes da chamada"; DESIGN.md §7.
 */
export function admitStep(ctx: DependencyContext): Step {
  let probes = 0;
  return (next) => (call, now, out) => {
    const remaining = call.limitMs - now;
    if (remaining >= ctx.live.p99Ms) {
      next(call, now, out);
      return;
    }
    // The refusal path only: a reading of the window that no recorded attempt would trigger.
    ctx.live.refreshIfDue(now);
    const required = ctx.live.p99Ms;
    if (remaining >= required) {
      next(call, now, out);
      return;
    }
    if (remaining > 0 && ctx.live.p99Source === 'start' && probes < BOOTSTRAP_PROBES_IN_FLIGHT) {
      probes++;
      try {
        next(call, now, {
          answered(response) {
            probes--;
            out.answered(response);
          },
          failed(error) {
            probes--;
            out.failed(error);
          },
        });
      } catch (error) {
        probes--;
        throw error;
      }
      return;
    }
    refuse(ctx, call, remaining, required, out);
  };
}

function refuse(
  ctx: DependencyContext,
  call: Call,
  remainingMs: number,
  requiredMs: number,
  out: Outcome,
): void {
  ctx.budget.recordRefused?.();
  if (ctx.events.has('fast-fail'))
    ctx.events.emit('fast-fail', {
      dependency: ctx.name,
      requestId: call.id,
      remainingMs,
      requiredMs,
      beforeAttempt: true,
    });
  const error = new DeadlineInsufficientError(ctx.name, remainingMs, requiredMs);
  // Inside a served request, where the request's time went before this call.
  const hop = currentHopTally();
  if (hop !== undefined) error.message += ` ${describeHop(hop, ctx.clock.now())}.`;
  failLater(out, withHistory(error, call, ctx.name));
}
