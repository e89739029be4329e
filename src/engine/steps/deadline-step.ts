import { currentDeadline } from '../../deadline/context.js';
import { effectiveLimitMs } from '../../deadline/effective-limit.js';
import type { DependencyContext, Step } from '../pipeline.js';

/**
 * Fixes the call's absolute limit: the earlier of the explicit `deadline` and the ambient one
 * (`withDeadline`, a server adapter) — deadlines only tighten — or now + `userDeadlineMs` when there
 * is neither; then capped at now + `localMaxMs` (a caller may ask for less time, never make this
 * service hold the dependency longer). The limit travels, unchanged, in `x-deadline-epoch-ms` on
 * every attempt.
 *
 * @throws {@link InvalidOptionError} when the explicit `deadline.limitMs` is not a finite number.
 * @see The source article, "prazo absoluto propagado".
 */
export function deadlineStep(ctx: DependencyContext): Step {
  // Calls that start in the same millisecond share a limit: format its header value once.
  let lastLimit = Number.NaN;
  let lastHeader = '';
  return (next) => (call, now) => {
    const limit = effectiveLimitMs(
      call.explicitLimitMs,
      currentDeadline()?.limitMs,
      now + ctx.userDeadlineMs,
      now + ctx.localMaxMs,
    );
    call.startMs = now;
    call.limitMs = limit;
    if (limit !== lastLimit) {
      lastLimit = limit;
      lastHeader = String(Math.floor(limit));
    }
    call.limitHeader = lastHeader;
    return next(call, now);
  };
}
