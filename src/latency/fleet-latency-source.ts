/**
 * Latency figures from outside the dependency's own window (the fleet, through Prometheus), as
 * `dependency({ fleetLatency })` reads them. `read()` is called at most once per `liveRefreshMs` on
 * the request path: it must return at once, from memory.
 */
export interface FleetLatencySource {
  /** The last good figures, or `undefined` before the first one. */
  read(nowMs: number): FleetLatencySnapshot | undefined;
}

/** The fleet's healthy latency as last read. Durations in ms. */
export interface FleetLatencySnapshot {
  p95Ms: number;
  p99Ms: number;
  /** Calls in the healthy steps the figures come from. */
  samples: number;
  /** Epoch ms of the read that produced them. */
  readAtMs: number;
  /** True once they are older than `staleAfterMs`: no good read since. */
  stale: boolean;
}
