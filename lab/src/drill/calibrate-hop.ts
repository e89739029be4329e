import { calibrateTimeout, RETRY_BUDGET_DEFAULTS } from 'prazo/policy';
import type { NormalizedDrillOptions } from './drill-options.js';
import type { TierMeasurement, TierPolicy } from './services/spec.js';

/**
 * The policy a prazo hop gets from what warm-up measured: the p99/p95 of its downstream (the least
 * remaining time worth starting a call with, and the hedge trigger), and at the edge the per-attempt
 * timeouts and attempts {@link calibrateTimeout} fits into the gateway's deadline.
 * A hop that measured nothing (no traffic reached it) falls back to the supplier's nominal p99.
 */
export function calibrateHop(
  measured: TierMeasurement,
  options: NormalizedDrillOptions,
  edge: boolean,
): TierPolicy {
  const p99Ms = Number.isFinite(measured.p99Ms) && measured.p99Ms > 0 ? measured.p99Ms : options.healthyP99Ms;
  const p95Ms = Number.isFinite(measured.p95Ms) && measured.p95Ms > 0 ? measured.p95Ms : p99Ms;
  const policy = calibrateTimeout({
    p99Ms,
    userDeadlineMs: options.gatewayDeadlineMs,
    attempts: edge ? options.prazoAttempts : 1,
  });
  return {
    p99Ms,
    p95Ms,
    connectMs: policy.connectMs,
    readMs: policy.readMs,
    attempts: policy.attempts,
    userDeadlineMs: options.gatewayDeadlineMs,
    budgetWindowMs: budgetWindowMs(options),
    warning: policy.warning?.message ?? null,
  };
}

/**
 * The window of prazo's retry budget in the drill: the article's 10 s, or half the error burst when the
 * phases are shorter (`--quick`). A sliding window longer than a phase carries that phase's unspent
 * allowance into the next one, so the burst would be measured against the degradation's budget.
 */
export function budgetWindowMs(options: NormalizedDrillOptions): number {
  return Math.min(RETRY_BUDGET_DEFAULTS.windowMs, Math.max(1000, Math.round(options.phases.burstMs / 2)));
}
