/**
 * Slow start: the largest share of the picks it would otherwise win that an instance may take,
 * `elapsedMs` after it returned from ejection (or joined the fleet). The share rises linearly from
 * `minShare` to 1 over `slowStartMs`, then stays at 1.
 *
 * @see Envoy slow start mode (linear ramp with aggression 1, minimum weight 10 %).
 * @example
 * slowStartShare(0, 10_000, 0.1); // 0.1
 * slowStartShare(5_000, 10_000, 0.1); // 0.55
 * slowStartShare(10_000, 10_000, 0.1); // 1
 */
export function slowStartShare(elapsedMs: number, slowStartMs: number, minShare: number): number {
  if (elapsedMs >= slowStartMs) return 1;
  if (elapsedMs <= 0) return minShare;
  return minShare + ((1 - minShare) * elapsedMs) / slowStartMs;
}
