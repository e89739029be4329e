/**
 * When to ask a DNS server again, in ms: the answer's TTL (the smallest of its records, in
 * seconds), held between `minMs` and `maxMs`. Without a TTL, `maxMs`. The floor keeps a zero or tiny
 * TTL from turning the resolver into a busy loop; the ceiling bounds how long a removed instance can
 * keep receiving calls when a server hands out long TTLs.
 */
export function ttlRefreshMs(ttlSeconds: number | undefined, minMs: number, maxMs: number): number {
  if (ttlSeconds === undefined || !Number.isFinite(ttlSeconds)) return maxMs;
  return Math.min(maxMs, Math.max(minMs, ttlSeconds * 1000));
}

/** First wait after a failed resolution, in ms; it doubles with each failure in a row. */
export const FAILURE_RETRY_BASE_MS = 500;

/**
 * When to try again after `failures` failed resolutions in a row (≥ 1), in ms: 0.5 s, 1 s, 2 s …
 * capped at the usual `refreshMs`. Quick at first, so that a dependency whose first resolution
 * failed does not keep its calls waiting for a whole refresh; never more often than that afterwards.
 */
export function failureRetryMs(failures: number, refreshMs: number): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  return Math.min(refreshMs, FAILURE_RETRY_BASE_MS * 2 ** exponent);
}
