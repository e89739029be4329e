import { calibrateTimeout } from '../../policy/calibrate.js';
import { RETRY_BUDGET_DEFAULTS } from '../../policy/retry-budget.js';
import type { NormalizedDrillOptions } from './drill-options.js';
import type { TierMeasurement, TierPolicy } from './services/spec.js';

/**
 * The order write's calibration: its read timeout at the healthy p99 × 2.5 (`slack`; 1.4 by default,
 * 3 at most). A retry after a read timeout does not speed a keyed write up — it waits at the orders
 * service for the execution already running — so an early cut buys nothing but a spent retry token,
 * and when many attempts reach it at once (a capacity drop, the slow tail) those the budget then
 * refuses a retry fail at once instead of waiting for their answer. The retries that help come fast:
 * after a reset (the answer lost), or a 503 (the layer gives the key back: not processed). 2.5 keeps
 * two attempts within the gateway's deadline; with the default 1.4 the drill's tail and recovery
 * phases lost most of their checkouts that way.
 */
export const WRITE_CALIBRATION = Object.freeze({ slack: 2.5 });

/**
 * The policy a prazo hop gets from what warm-up measured: the p99/p95 of its downstream (the least
 * remaining time worth starting a call with, and the hedge trigger), and for a hop that retries (the
 * `edge`, and the gateway's order `write`, which carries an idempotency key) the per-attempt timeouts
 * and attempts {@link calibrateTimeout} fits into the gateway's deadline; the write's with
 * {@link WRITE_CALIBRATION}.
 * A hop that measured nothing (no traffic reached it) falls back to the supplier's nominal p99.
 */
export function calibrateHop(
  measured: TierMeasurement,
  options: NormalizedDrillOptions,
  hop: 'edge' | 'write' | 'internal',
): TierPolicy {
  const p99Ms = Number.isFinite(measured.p99Ms) && measured.p99Ms > 0 ? measured.p99Ms : options.healthyP99Ms;
  const p95Ms = Number.isFinite(measured.p95Ms) && measured.p95Ms > 0 ? measured.p95Ms : p99Ms;
  const policy = calibrateTimeout(
    {
      p99Ms,
      userDeadlineMs: options.gatewayDeadlineMs,
      attempts: hop === 'internal' ? 1 : options.prazoAttempts,
    },
    hop === 'write' ? WRITE_CALIBRATION : undefined,
  );
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
