// TEMPORARY until issue 5's pure hedge decision lands in src/client/hedge.ts.
/**
 * The hedge trigger rule: send one second copy when the first has not answered by the dependency's
 * live p95, and only if the shared retry budget grants it.
 * Returns the delay after which the hedge is considered, or `undefined` when no p95 is known yet.
 */
export function hedgeDelayMs(liveP95Ms: number | undefined): number | undefined {
  return liveP95Ms !== undefined && liveP95Ms > 0 ? liveP95Ms : undefined;
}

/** Whether to send the hedge now that the delay has passed: the budget decides (max 1 hedge). */
export function grantHedge(hedgesSent: number, budget: { tryConsume(): boolean }): boolean {
  return hedgesSent === 0 && budget.tryConsume();
}
