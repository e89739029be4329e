import type { DependencyContext, Step } from './pipeline.js';

/**
 * Counts the call as an original in the dependency's retry budget, once, before any attempt: the
 * budget's ratio is extras over originals, and every retry or hedge spends from it.
 */
export function budgetStep(ctx: DependencyContext): Step {
  return (next) => (call) => {
    ctx.budget.recordOriginal();
    return next(call);
  };
}
