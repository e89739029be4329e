/** State of an instance as the balancer reports it (see `Balancer.snapshot`). */
export type InstanceState = 'up' | 'down' | 'ejected' | 'probing' | 'draining';

/** Why an instance changed state. */
export type TransitionReason =
  /** `consecutiveFailures` gateway failures in a row: up or down → ejected. */
  | 'consecutive-failures'
  /** The failure-ratio rule: up or down → ejected. */
  | 'failure-ratio'
  /** A connect failed: up → down. */
  | 'connect-failure'
  /** The connect-down period ended: down → up. */
  | 'down-ended'
  /** A call already in flight got an answer: down → up. */
  | 'answered'
  /** The ejection ended; the next first attempt is its probe: ejected → probing. */
  | 'ejection-ended'
  /** Its probe succeeded: probing → up (slow start). */
  | 'probe-succeeded'
  /** Its probe failed: probing → ejected, for longer. */
  | 'probe-failed'
  /**
   * Its probe failed while no other instance answers cleanly either: probing → up. Keeping it out
   * would only move its load onto instances that fail alike (a fleet-wide error burst).
   */
  | 'fleet-failing'
  /** `add()` or `setOrigins()`: absent (or draining) → up. */
  | 'added'
  /** `remove()` or `setOrigins()`: → draining (calls in flight) or absent. */
  | 'removed'
  /** The last call of a draining instance finished: draining → absent. */
  | 'drained';

/**
 * One change of state of one instance, for events (`instance-ejected`, `instance-returned`,
 * membership changes) and metrics. `from`/`to` are `'absent'` outside the fleet.
 */
export interface InstanceTransition {
  origin: string;
  index: number;
  from: InstanceState | 'absent';
  to: InstanceState | 'absent';
  reason: TransitionReason;
  /**
   * When the balancer saw it, epoch ms. The end of an ejection or of a connect-down period is seen
   * by the first pick (or snapshot) at or after it, so `atMs` may be later than the end itself.
   */
  atMs: number;
  /** Times the instance has been ejected (including this ejection). */
  timesEjected: number;
  /** End of the ejection or connect-down period that starts, else undefined. */
  untilMs: number | undefined;
}
