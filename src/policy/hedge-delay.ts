/**
 * When to send a hedge copy: pure policy, shared by the client's hedging step and the simulator.
 */

/** The hedging setting of a dependency: off, a fixed delay in ms, or the live p95. */
export type HedgePolicy = { at: 'p95' | number } | false;

/**
 * How long to wait before sending a hedge copy, in ms, or `undefined` for no hedge: hedging off,
 * or `'p95'` while no p95 is known. Pure, shared with the simulator.
 *
 * @example hedgeDelayMs({ at: 'p95' }, 38) // 38
 * @see Dean & Barroso, "The Tail at Scale" (CACM 2013): defer the second request until the first
 * has been outstanding longer than the 95th-percentile expected latency.
 */
export function hedgeDelayMs(policy: HedgePolicy, p95Ms: number | undefined): number | undefined {
  if (policy === false) return undefined;
  if (policy.at === 'p95') return p95Ms === undefined || !(p95Ms >= 0) ? undefined : p95Ms;
  return policy.at;
}

/**
 * Whether a try may be hedged: hedging on, a delay known, the request idempotent (GET/HEAD/OPTIONS
 * or an `Idempotency-Key`) with a replayable body, and the delay ending before the try's own
 * timeout (a copy sent when the first is about to be cut has no time to win). Pure.
 */
export function shouldHedge(
  delayMs: number | undefined,
  request: { idempotent: boolean; replayable: boolean },
  tryTimeoutMs: number,
): delayMs is number {
  return delayMs !== undefined && request.idempotent && request.replayable && delayMs < tryTimeoutMs;
}
