/**
 * The arithmetic of outlier ejection, apart from the state it is applied to.
 *
 * @see Envoy outlier detection (consecutive gateway failures, failure percentage, ejection time ×
 *   times ejected with a cap, max ejection percent, always-eject-one, panic threshold).
 * @see Finagle failure accrual (consecutive failures, then dead for a backoff, then one probe).
 */

/** How long the `timesEjected`-th ejection lasts (1-based): base × n, at most `maxMs`. Unit: ms. */
export function ejectionMs(timesEjected: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * Math.max(1, timesEjected), maxMs);
}

/**
 * Most instances that may be ejected at once among `members`: `floor(members × fraction)`, but at
 * least one as soon as there are two, and none with a single instance (there is nowhere else to go).
 */
export function maxEjected(members: number, fraction: number): number {
  if (members < 2) return 0;
  return Math.max(1, Math.floor(members * fraction));
}

/**
 * Whether fewer than `threshold` of the `members` are up: the balancer then ignores ejection and
 * spreads load over every instance that accepts connections, since sending the whole load to the
 * few left would only take them down as well.
 */
export function inPanic(up: number, members: number, threshold: number): boolean {
  return up < threshold * members;
}

/**
 * How many standard errors the instance's failure ratio must lie above its peers' for the ratio
 * rule (a one-sided two-proportion z-test): without it, in a fleet failing 40 % everywhere one
 * 20-outcome window looks like an outlier every few hundred calls by chance alone.
 */
export const OUTLIER_Z = 4;

/**
 * Whether an instance with `failures` among its last `count` outcomes is an outlier, given
 * `peerFailures` among `peerCount` outcomes of the other instances: its failure ratio reaches
 * `ratio`, is at least `overPeers` times the peers' ratio, and its failures exceed what the peers'
 * ratio predicts by {@link OUTLIER_Z} standard errors (two-proportion z-test, pooled). Without any
 * outcome of its peers there is nothing to compare with: not an outlier (an instance that fails
 * everything is the consecutive rule's case).
 */
export function isFailureOutlier(
  failures: number,
  count: number,
  peerFailures: number,
  peerCount: number,
  ratio: number,
  overPeers: number,
): boolean {
  if (count <= 0 || peerCount <= 0) return false;
  const own = failures / count;
  if (own < ratio) return false;
  const peers = peerFailures / peerCount;
  if (own < overPeers * peers) return false;
  const pooled = (failures + peerFailures) / (count + peerCount);
  const standardError = Math.sqrt(pooled * (1 - pooled) * (1 / count + 1 / peerCount));
  return own - peers >= OUTLIER_Z * standardError;
}
