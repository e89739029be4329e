import type { NormalizedDrillOptions } from './drill-options.js';
import type { TierMeasurement, TierPolicy } from './service-spec.js';

/**
 * The policy a prazo hop gets from what warm-up measured: the p99/p95 of its downstream, and at the
 * edge the per-attempt timeouts and attempts that fit the gateway's deadline.
 */
export function calibrateEdge(
  measured: TierMeasurement,
  options: NormalizedDrillOptions,
  edge: boolean,
): TierPolicy {
  // PLACEHOLDER until calibrateTimeout lands on main.
  const p99Ms = Number.isFinite(measured.p99Ms) ? measured.p99Ms : options.healthyP99Ms;
  const p95Ms = Number.isFinite(measured.p95Ms) ? measured.p95Ms : p99Ms;
  const readMs = Math.ceil(p99Ms * 1.4);
  const fitting = Math.floor(options.gatewayDeadlineMs / (readMs + 30));
  return {
    p99Ms,
    p95Ms,
    connectMs: Math.min(400, readMs),
    readMs,
    attempts: edge ? Math.max(1, Math.min(options.prazoAttempts, fitting)) : 1,
    userDeadlineMs: options.gatewayDeadlineMs,
  };
}
