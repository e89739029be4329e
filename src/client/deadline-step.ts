import { currentDeadline } from '../deadline/context.js';
import type { DependencyContext, Step } from './pipeline.js';

/**
 * Fixes the call's absolute limit: the explicit `deadline` › the ambient one (`withDeadline`) ›
 * now + `userDeadlineMs`; then capped at now + `localMaxMs` (a caller may ask for less time, never
 * make this service hold the dependency longer). The limit travels, unchanged, in
 * `x-deadline-epoch-ms` on every attempt.
 *
 * @see The source article, "prazo absoluto propagado".
 */
export function deadlineStep(ctx: DependencyContext): Step {
  // Calls that start in the same millisecond share a limit: format its header value once.
  let lastLimit = Number.NaN;
  let lastHeader = '';
  return (next) => (call) => {
    const now = ctx.clock.now();
    let limit = call.explicitLimitMs;
    if (limit === undefined) {
      const ambient = currentDeadline();
      limit = ambient === undefined ? now + ctx.userDeadlineMs : ambient.limitMs;
    }
    const cap = now + ctx.localMaxMs;
    if (!(limit <= cap)) limit = cap;
    call.startMs = now;
    call.limitMs = limit;
    if (limit !== lastLimit) {
      lastLimit = limit;
      lastHeader = String(Math.floor(limit));
    }
    call.limitHeader = lastHeader;
    return next(call);
  };
}
