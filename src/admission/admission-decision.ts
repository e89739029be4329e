import type { Criticality } from '../wire/criticality-header.js';

/**
 * Why the admission refused a request:
 * - `expired`: it arrived after its deadline;
 * - `insufficient`: its remaining deadline is below the route's expected service time (on arrival,
 *   or when its turn came in the queue);
 * - `queue-expired`: its deadline passed while it waited in the queue;
 * - `queue-full`: every slot busy and the queue full of work at least as critical;
 * - `shed`: `sheddable` work refused early (queue half full, or under sustained queue delay), or
 *   waiting work pushed out of a full queue by more critical work;
 * - `queue-delay`: CoDel dropped it: it waited longer than the target while the queue was overloaded.
 */
export type RefusalReason =
  | 'expired'
  | 'insufficient'
  | 'queue-expired'
  | 'queue-full'
  | 'shed'
  | 'queue-delay';

/** Every {@link RefusalReason}, in a fixed order (metric series are indexed by it). */
export const REFUSAL_REASONS: readonly RefusalReason[] = Object.freeze([
  'expired',
  'insufficient',
  'queue-expired',
  'queue-full',
  'shed',
  'queue-delay',
]);

/** HTTP status of a refusal: 504 when the deadline is the problem, 503 when the server's load is. */
export function refusalStatus(reason: RefusalReason): 503 | 504 {
  return reason === 'expired' || reason === 'insufficient' || reason === 'queue-expired' ? 504 : 503;
}

/** What the admission knows when a request arrives. */
export interface ArrivalState {
  /** Time left before the request's deadline, in ms. */
  remainingMs: number;
  /** The route's expected service time in ms, or undefined while it has too few samples. */
  expectedMs: number | undefined;
  criticality: Criticality;
  /** Requests handed to their handler and not finished. */
  inFlight: number;
  /** The in-flight limit (`Infinity` when there is none). */
  maxInFlight: number;
  /** Requests waiting in the queue. */
  queueLength: number;
  maxQueue: number;
  /** Queue length from which `sheddable` work is refused. */
  sheddableQueue: number;
  /** Whether CoDel finds the queue overloaded. */
  overloaded: boolean;
  /** The least critical level among the waiting requests (undefined when the queue is empty). */
  leastWaiting: Criticality | undefined;
}

/** What to do with an arriving request: run it now, queue it, or refuse it (and why). */
export type ArrivalDecision = 'run' | 'queue' | RefusalReason;

const RANK: Readonly<Record<Criticality, number>> = { critical: 0, default: 1, sheddable: 2 };

/** Whether `a` is more critical than `b`. */
export function moreCritical(a: Criticality, b: Criticality): boolean {
  return RANK[a] < RANK[b];
}

/**
 * Decides an arrival, rules in order:
 * 1. no time left → `expired`; remaining below the expected service time → `insufficient`;
 * 2. a free slot and nobody waiting → `run`;
 * 3. `sheddable` work while the queue is overloaded or at least `sheddableQueue` long → `shed`;
 * 4. a full queue → `queue` when it holds less critical work (which the queue pushes out),
 *    else `queue-full`;
 * 5. otherwise → `queue`.
 */
export function decideArrival(s: ArrivalState): ArrivalDecision {
  if (s.remainingMs <= 0) return 'expired';
  if (s.expectedMs !== undefined && s.remainingMs < s.expectedMs) return 'insufficient';
  if (s.inFlight < s.maxInFlight && s.queueLength === 0) return 'run';
  if (s.criticality === 'sheddable' && (s.overloaded || s.queueLength >= s.sheddableQueue)) return 'shed';
  if (s.queueLength >= s.maxQueue)
    return s.leastWaiting !== undefined && moreCritical(s.criticality, s.leastWaiting)
      ? 'queue'
      : 'queue-full';
  return 'queue';
}
