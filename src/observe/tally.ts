import type {
  AttemptEndEvent,
  BudgetExhaustedEvent,
  FastFailEvent,
  HedgeEvent,
  InstanceEvent,
  LimitedEvent,
  MembershipErrorEvent,
  RequestEndEvent,
  ServerTimingIgnoredEvent,
} from '../engine/events.js';
import type {
  DriftDirection,
  DriftEvent,
  DriftEventSource,
  RecalibratedEvent,
} from '../latency/drift-check.js';
import { DurationBuckets } from '../latency/duration-buckets.js';
import type { AttemptKind } from '../wire/attempt-header.js';
import { LABEL_VALUES } from '../wire/metric-names.js';
import type { ServerTimingProblem } from '../wire/server-timing.js';
import type { InstrumentableDependency } from './source.js';

/**
 * Running counts of one dependency's events, kept as plain numbers so that the request path pays a
 * property increment and nothing else; the adapters copy them into their counters when the metrics are
 * read (a Prometheus scrape, an OpenTelemetry collection).
 */
export interface Tally {
  readonly requests: { success: number; failure: number };
  readonly attempts: Record<AttemptKind, number>;
  readonly budgetExhausted: { retry: number; hedge: number };
  fastFails: number;
  /** Calls refused before any attempt (a subset of `fastFails`; never originals). */
  refused: number;
  readonly timeouts: { connect: number; read: number };
  hedges: number;
  hedgesWon: number;
  /** Never-written attempts sent again to another instance. */
  requeues: number;
  /** Instances ejected as outliers. */
  ejections: number;
  /** Failed resolutions of a live set of origins (`membership-error`). */
  membershipFailures: number;
  /** Calls refused locally by an overload protection (`limited`), by reason. */
  readonly limited: { concurrency: number; throttle: number };
  /** Answers whose `Server-Timing` was (partly) ignored (`server-timing-ignored`), by problem. */
  readonly serverTimingIgnored: Record<ServerTimingProblem, number>;
  /** Unsubscribes from the dependency. Idempotent. */
  detach(): void;
}

/**
 * The two duration histograms of one dependency, in prazo's fixed buckets: logical requests by
 * outcome (series = index in `LABEL_VALUES.outcome`) and attempts by kind (index in `LABEL_VALUES.kind`).
 * An adapter keeps them across `detach()` and a later `instrument()` of the same name, so a
 * histogram never goes back.
 */
export interface TallyDurations {
  readonly request: DurationBuckets;
  readonly attempt: DurationBuckets;
}

/** Fresh {@link TallyDurations}, every bucket at zero. */
export function tallyDurations(): TallyDurations {
  return {
    request: new DurationBuckets(LABEL_VALUES.outcome.length),
    attempt: new DurationBuckets(LABEL_VALUES.kind.length),
  };
}

const KIND_SERIES: Readonly<Record<AttemptKind, number>> = { original: 0, retry: 1, hedge: 2 };

/** Subscribes to `dependency`'s events, counts them and records their durations into `durations`. */
export function createTally(
  dependency: InstrumentableDependency,
  durations: TallyDurations = tallyDurations(),
): Tally {
  const onRequestEnd = (e: RequestEndEvent): void => {
    if (e.outcome === 'success') {
      tally.requests.success++;
      durations.request.record(0, e.durationMs / 1000);
    } else {
      tally.requests.failure++;
      durations.request.record(1, e.durationMs / 1000);
    }
  };
  // Attempts are counted as they end rather than as they start: every attempt ends (a timeout or the
  // call's end cuts it), and not listening to 'attempt-start' spares the client building its payload.
  const onAttemptEnd = (e: AttemptEndEvent): void => {
    if (e.timeout === 'connect' || e.timeout === 'read') tally.timeouts[e.timeout]++;
    if (e.kind === 'hedge' && e.won) tally.hedgesWon++;
    const series = KIND_SERIES[e.kind];
    if (series !== undefined) {
      tally.attempts[e.kind]++;
      durations.attempt.record(series, e.durationMs / 1000);
    }
  };
  const onHedge = (_e: HedgeEvent): void => {
    tally.hedges++;
  };
  const onBudgetExhausted = (e: BudgetExhaustedEvent): void => {
    tally.budgetExhausted[e.purpose === 'hedge' ? 'hedge' : 'retry']++;
  };
  const onFastFail = (e: FastFailEvent): void => {
    tally.fastFails++;
    if (e.beforeAttempt) tally.refused++;
  };
  const onMembershipError = (_e: MembershipErrorEvent): void => {
    tally.membershipFailures++;
  };

  const onRequeue = (): void => {
    tally.requeues++;
  };
  const onServerTimingIgnored = (e: ServerTimingIgnoredEvent): void => {
    tally.serverTimingIgnored[e.reason]++;
  };
  const onEjected = (_e: InstanceEvent): void => {
    tally.ejections++;
  };
  const onLimited = (e: LimitedEvent): void => {
    tally.limited[e.reason === 'throttle' ? 'throttle' : 'concurrency']++;
  };

  let attached = true;
  const tally: Tally = {
    requests: { success: 0, failure: 0 },
    attempts: { original: 0, retry: 0, hedge: 0 },
    budgetExhausted: { retry: 0, hedge: 0 },
    fastFails: 0,
    refused: 0,
    timeouts: { connect: 0, read: 0 },
    hedges: 0,
    hedgesWon: 0,
    requeues: 0,
    ejections: 0,
    membershipFailures: 0,
    limited: { concurrency: 0, throttle: 0 },
    serverTimingIgnored: { malformed: 0, 'too-long': 0, 'too-many': 0, 'too-deep': 0, 'bad-value': 0 },
    detach() {
      if (!attached) return;
      attached = false;
      dependency.off('request-end', onRequestEnd);
      dependency.off('attempt-end', onAttemptEnd);
      dependency.off('hedge', onHedge);
      dependency.off('budget-exhausted', onBudgetExhausted);
      dependency.off('fast-fail', onFastFail);
      dependency.off('requeue', onRequeue);
      dependency.off('server-timing-ignored', onServerTimingIgnored);
      dependency.off('instance-ejected', onEjected);
      dependency.off('membership-error', onMembershipError);
      dependency.off('limited', onLimited);
    },
  };
  dependency.on('request-end', onRequestEnd);
  dependency.on('attempt-end', onAttemptEnd);
  dependency.on('hedge', onHedge);
  dependency.on('budget-exhausted', onBudgetExhausted);
  dependency.on('fast-fail', onFastFail);
  dependency.on('requeue', onRequeue);
  dependency.on('server-timing-ignored', onServerTimingIgnored);
  dependency.on('instance-ejected', onEjected);
  dependency.on('membership-error', onMembershipError);
  dependency.on('limited', onLimited);
  return tally;
}

/** The healthy-window figures both adapters publish, read at collection time. */
export interface HealthyLatency {
  p95Ms: number;
  p99Ms: number;
}

/** Healthy p95/p99 of `dependency`'s live window, or `undefined` while no slice is healthy. */
export function readHealthyLatency(dependency: InstrumentableDependency): HealthyLatency | undefined {
  const { histogram } = dependency.window().healthy();
  if (histogram.count === 0) return undefined;
  const [p95Ms = 0, p99Ms = 0] = histogram.percentiles([95, 99]);
  return { p95Ms, p99Ms };
}

/** What both adapters count of a drift monitor's events, per dependency. */
export interface DriftCounts {
  drift: Record<DriftDirection, number>;
  recalibrations: number;
}

/** Fresh {@link DriftCounts}, every series at zero. */
export function driftCounts(): DriftCounts {
  return { drift: { 'timeout-too-tight': 0, 'timeout-too-generous': 0 }, recalibrations: 0 };
}

/**
 * Counts `monitor`'s `drift` and `recalibrated` events into the counts `find` returns for the
 * event's dependency (events of dependencies `find` does not know are ignored). Returns the
 * unsubscribe; does nothing without a monitor.
 */
export function countDrift(
  monitor: DriftEventSource | undefined,
  find: (dependency: string) => DriftCounts | undefined,
): () => void {
  if (monitor === undefined) return () => {};
  const onDrift = (e: DriftEvent): void => {
    const counts = find(e.dependency);
    if (counts && e.direction in counts.drift) counts.drift[e.direction]++;
  };
  const onRecalibrated = (e: RecalibratedEvent): void => {
    const counts = find(e.dependency);
    if (counts) counts.recalibrations++;
  };
  monitor.on('drift', onDrift);
  monitor.on('recalibrated', onRecalibrated);
  return () => {
    monitor.off('drift', onDrift);
    monitor.off('recalibrated', onRecalibrated);
  };
}
