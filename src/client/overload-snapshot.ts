import type { AdaptiveThrottle, AdaptiveThrottleState } from '../policy/adaptive-throttle.js';
import type { ConcurrencyGate, ConcurrencySnapshot } from '../policy/concurrency-gate.js';

/** The overload protections of a dependency now, as `dependency.overload()` reports them. */
export interface OverloadSnapshot {
  /** The adaptive concurrency limit, or null when `concurrency` is off. */
  concurrency: ConcurrencySnapshot | null;
  /** Adaptive throttling over its window, or null when `throttle` is off. */
  throttle: AdaptiveThrottleState | null;
}

/** Reads both protections (either may be off). */
export function overloadSnapshot(
  gate: ConcurrencyGate | null,
  throttle: AdaptiveThrottle | null,
  nowMs: number,
): OverloadSnapshot {
  return {
    concurrency: gate === null ? null : gate.snapshot(),
    throttle: throttle === null ? null : throttle.state(nowMs),
  };
}
