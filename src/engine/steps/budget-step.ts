import type { DependencyContext, Step } from '../pipeline.js';

/**
 * Counts the call as an original in the dependency's retry budget, once, before its first attempt:
 * the budget's ratio is extras over originals, and every retry or hedge spends from it. It runs after
 * the admission step, so a call refused before any attempt is never counted as an original. The
 * requeue budget counts it too (its ratio is requeues over calls) when there is more than one instance.
 * `ownBudget`: the retry budget runs on the dependency's clock.
 */
export function budgetStep(ctx: DependencyContext, ownBudget: boolean): Step {
  return (next) => (call, nowMs, out) => {
    // A budget on the dependency's clock takes the time already read; another reads its own clock.
    if (ownBudget) ctx.budget.recordOriginal(nowMs);
    else ctx.budget.recordOriginal();
    // One instance never requeues: its calls are not counted (the budget's floor covers a fleet
    // that grows later).
    if (ctx.sole === -1) ctx.requeueBudget.recordOriginal(nowMs);
    next(call, nowMs, out);
  };
}
