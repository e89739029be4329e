/**
 * `prazo/otel`: prazo's metrics through the OpenTelemetry metrics API.
 *
 * @packageDocumentation
 */
import {
  type Attributes,
  type BatchObservableCallback,
  type Meter,
  type MeterProvider,
  metrics,
  type Observable,
} from '@opentelemetry/api';
import { InvalidOptionError } from '../errors.js';
import type { DriftDirection, DriftEventSource } from '../latency/drift-check.js';
import {
  DURATION_BUCKETS_SECONDS,
  LABEL_VALUES,
  METRICS,
  type MetricDefinition,
  OTEL_ATTRIBUTES,
} from '../wire/metric-names.js';
import { type FleetFeedView, readFleetFeeds, toFleetFeeds } from './fleet-feed-view.js';
import { instanceFigures } from './instance-series.js';
import { type DurationProducer, durationRegistry } from './otel-producer.js';
import { createReplay, type Replay, replay } from './otel-replay.js';
import { type InstrumentableDependency, type InstrumentTarget, toDependencies } from './source.js';
import {
  countDrift,
  createTally,
  driftCounts,
  readHealthyLatency,
  type Tally,
  type TallyDurations,
  tallyDurations,
} from './tally.js';

export type { DriftEventSource } from '../latency/drift-check.js';
export type { FleetFeedView } from './fleet-feed-view.js';
export { instrumentTracing, type OtelTracingOptions, type TracingInstrumentation } from './otel-tracing.js';

import { VERSION } from './otel-tracing.js';

export type { MetricDefinition, MetricKey, MetricLabel, MetricType } from '../wire/metric-names.js';
export { DURATION_BUCKETS_SECONDS, LABEL_VALUES, METRICS, OTEL_ATTRIBUTES } from '../wire/metric-names.js';
export type { InstrumentableDependency, InstrumentTarget } from './source.js';

/** Options of {@link instrument}. */
export interface OtelInstrumentOptions {
  /** Meter the instruments are created on. @default meterProvider.getMeter('prazo', version) */
  meter?: Meter;
  /** Provider of the default meter. @default the global provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
  /** A drift monitor whose events feed `prazo.client.drift.events` and `prazo.client.recalibrations`. */
  driftMonitor?: DriftEventSource;
  /**
   * Fleet latency feeds (`createFleetLatencyFeed()`) whose staleness feeds `prazo.client.fleet_latency.age`
   * and `prazo.client.fleet_latency.stale`, with the feed's target as `prazo.dependency`.
   */
  fleetLatency?: FleetFeedView | Iterable<FleetFeedView>;
  /**
   * A producer from {@link createDurationProducer}, registered in the reader's `metricProducers`: the
   * duration histograms are then built from prazo's buckets at collection instead of being handed to
   * the SDK one `record()` per sample.
   * @default undefined (the durations go through `meter.createHistogram()`)
   */
  durations?: DurationProducer;
}

/** Handle returned by {@link instrument}. */
export interface Instrumentation {
  /** Stops listening and removes the observable callback. Idempotent. */
  detach(): void;
}

interface Attachment {
  dependency: InstrumentableDependency;
  tally: Tally;
  drift: Record<DriftDirection, number>;
  recalibrations: number;
  base: Attributes;
  durations: TallyDurations;
  /** The durations handed to the SDK's histograms, or `undefined` when a producer reads them. */
  replays: [Replay, Replay] | undefined;
  /** Removes the dependency from the duration producer. */
  unregister: (() => void) | undefined;
}

/**
 * Publishes the metrics of one dependency, several, or a client's dependencies through OpenTelemetry.
 *
 * Durations are histograms (unit `s`, explicit bucket advice 1 ms–30 s). The request path records them
 * in prazo's own fixed buckets; they reach the SDK's histograms at collection (see {@link replay}). Counts
 * are observable counters and the ratios, timeouts and healthy latency observable gauges, all read in one
 * batch callback when the SDK collects. Names follow OpenTelemetry conventions (`prazo.client.requests`,
 * `prazo.client.attempt.duration` …) with attributes under `prazo.` (`prazo.dependency` …); see
 * {@link METRICS} for the full list.
 *
 * @throws {InvalidOptionError} when `target` is not a dependency, a list of them or a client.
 * @example
 * import { metrics } from '@opentelemetry/api';
 * import { instrument } from 'prazo/otel';
 * const handle = instrument(payments, { meter: metrics.getMeter('checkout') });
 * handle.detach();
 */
export function instrument(target: InstrumentTarget, options: OtelInstrumentOptions = {}): Instrumentation {
  const dependencies = toDependencies(target);
  const feeds = toFleetFeeds(options.fleetLatency);
  const meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter('prazo', VERSION);
  const describe = (def: MetricDefinition) => ({ description: def.help, unit: def.unit });
  const durationOptions = (def: MetricDefinition) => ({
    ...describe(def),
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_SECONDS] },
  });
  const producer = options.durations === undefined ? undefined : durationRegistry(options.durations);
  if (options.durations !== undefined && producer === undefined)
    throw new InvalidOptionError('durations', 'the result of createDurationProducer()', options.durations);
  const requestDuration =
    producer === undefined
      ? meter.createHistogram(METRICS.requestDuration.otel, durationOptions(METRICS.requestDuration))
      : undefined;
  const attemptDuration =
    producer === undefined
      ? meter.createHistogram(METRICS.attemptDuration.otel, durationOptions(METRICS.attemptDuration))
      : undefined;
  const counter = (def: MetricDefinition) => meter.createObservableCounter(def.otel, describe(def));
  const gauge = (def: MetricDefinition) => meter.createObservableGauge(def.otel, describe(def));
  const o = {
    requests: counter(METRICS.requests),
    attempts: counter(METRICS.attempts),
    budgetExhausted: counter(METRICS.budgetExhausted),
    fastFails: counter(METRICS.fastFails),
    refused: counter(METRICS.refused),
    timeouts: counter(METRICS.timeouts),
    hedges: counter(METRICS.hedges),
    hedgesWon: counter(METRICS.hedgesWon),
    driftEvents: counter(METRICS.driftEvents),
    recalibrations: counter(METRICS.recalibrations),
    requeues: counter(METRICS.requeues),
    serverTimingIgnored: counter(METRICS.serverTimingIgnored),
    instanceEjections: counter(METRICS.instanceEjections),
    instances: gauge(METRICS.instances),
    instanceShare: gauge(METRICS.instanceShare),
    instanceInFlight: gauge(METRICS.instanceInFlight),
    instanceLatency: gauge(METRICS.instanceLatency),
    membershipRefreshFailures: counter(METRICS.membershipRefreshFailures),
    retryRatio: gauge(METRICS.retryRatio),
    timeoutSeconds: gauge(METRICS.timeoutSeconds),
    healthyLatency: gauge(METRICS.healthyLatency),
    timeoutP99Ratio: gauge(METRICS.timeoutP99Ratio),
    fleetLatencyAge: gauge(METRICS.fleetLatencyAge),
    fleetLatencyStale: gauge(METRICS.fleetLatencyStale),
    limited: counter(METRICS.limited),
    concurrencyLimit: gauge(METRICS.concurrencyLimit),
    concurrencyInFlight: gauge(METRICS.concurrencyInFlight),
    concurrencyQueued: gauge(METRICS.concurrencyQueued),
    throttleProbability: gauge(METRICS.throttleProbability),
  };
  const A = OTEL_ATTRIBUTES;

  const attachments = new Map<string, Attachment>();
  for (const dependency of dependencies) {
    const base: Attributes = Object.freeze({ [A.dependency]: dependency.name });
    const withLabel = (label: string, value: string): Attributes =>
      Object.freeze({ ...base, [label]: value });
    const requestAttrs = {
      success: withLabel(A.outcome, 'success'),
      failure: withLabel(A.outcome, 'failure'),
    };
    const attemptAttrs = {
      original: withLabel(A.kind, 'original'),
      retry: withLabel(A.kind, 'retry'),
      hedge: withLabel(A.kind, 'hedge'),
    };
    const durations = tallyDurations();
    const tally = createTally(dependency, durations);
    attachments.set(dependency.name, {
      dependency,
      tally,
      ...driftCounts(),
      base,
      durations,
      replays:
        requestDuration === undefined || attemptDuration === undefined
          ? undefined
          : [
              createReplay(durations.request, requestDuration, [requestAttrs.success, requestAttrs.failure]),
              createReplay(durations.attempt, attemptDuration, [
                attemptAttrs.original,
                attemptAttrs.retry,
                attemptAttrs.hedge,
              ]),
            ],
      unregister: producer?.attach({
        request: { buckets: durations.request, attributes: [requestAttrs.success, requestAttrs.failure] },
        attempt: {
          buckets: durations.attempt,
          attributes: [attemptAttrs.original, attemptAttrs.retry, attemptAttrs.hedge],
        },
      }),
    });
  }

  const observeAll: BatchObservableCallback = (observer) => {
    for (const a of attachments.values()) {
      const { tally, base, dependency } = a;
      if (a.replays !== undefined) {
        replay(a.replays[0]);
        replay(a.replays[1]);
      }
      const at = (label: string, value: string): Attributes => ({ ...base, [label]: value });
      for (const outcome of LABEL_VALUES.outcome)
        observer.observe(o.requests, tally.requests[outcome], at(A.outcome, outcome));
      for (const kind of LABEL_VALUES.kind)
        observer.observe(o.attempts, tally.attempts[kind], at(A.kind, kind));
      for (const purpose of LABEL_VALUES.purpose)
        observer.observe(o.budgetExhausted, tally.budgetExhausted[purpose], at(A.purpose, purpose));
      observer.observe(o.fastFails, tally.fastFails, base);
      observer.observe(o.refused, tally.refused, base);
      for (const phase of LABEL_VALUES.phase)
        observer.observe(o.timeouts, tally.timeouts[phase], at(A.phase, phase));
      observer.observe(o.hedges, tally.hedges, base);
      observer.observe(o.hedgesWon, tally.hedgesWon, base);
      for (const direction of LABEL_VALUES.direction)
        observer.observe(o.driftEvents, a.drift[direction], at(A.direction, direction));
      observer.observe(o.recalibrations, a.recalibrations, base);
      observer.observe(o.requeues, tally.requeues, base);
      for (const problem of LABEL_VALUES.problem)
        observer.observe(o.serverTimingIgnored, tally.serverTimingIgnored[problem], at(A.problem, problem));
      observer.observe(o.instanceEjections, tally.ejections, base);
      if (dependency.instances !== undefined) {
        const f = instanceFigures(dependency.instances());
        for (const state of LABEL_VALUES.state)
          observer.observe(o.instances, f.byState[state], at(A.state, state));
        for (const s of f.series) {
          const attrs = at(A.instance, s.instance);
          observer.observe(o.instanceShare, s.share, attrs);
          observer.observe(o.instanceInFlight, s.inFlight, attrs);
          if (s.latencySeconds !== undefined) observer.observe(o.instanceLatency, s.latencySeconds, attrs);
        }
      }
      observer.observe(o.membershipRefreshFailures, tally.membershipFailures, base);
      for (const reason of LABEL_VALUES.reason)
        observer.observe(o.limited, tally.limited[reason], at(A.reason, reason));
      const overload = dependency.overload?.();
      if (overload?.concurrency) {
        observer.observe(o.concurrencyLimit, overload.concurrency.limit, base);
        observer.observe(o.concurrencyInFlight, overload.concurrency.inFlight, base);
        observer.observe(o.concurrencyQueued, overload.concurrency.queued, base);
      }
      if (overload?.throttle) observer.observe(o.throttleProbability, overload.throttle.probability, base);

      observer.observe(o.retryRatio, dependency.budget().ratio, base);
      const policy = dependency.policy();
      observer.observe(o.timeoutSeconds, policy.connectMs / 1000, at(A.phase, 'connect'));
      observer.observe(o.timeoutSeconds, policy.readMs / 1000, at(A.phase, 'read'));
      const healthy = readHealthyLatency(dependency);
      if (healthy) {
        observer.observe(o.healthyLatency, healthy.p95Ms / 1000, at(A.quantile, '0.95'));
        observer.observe(o.healthyLatency, healthy.p99Ms / 1000, at(A.quantile, '0.99'));
        if (healthy.p99Ms > 0) observer.observe(o.timeoutP99Ratio, policy.readMs / healthy.p99Ms, base);
      }
    }
  };
  const observeFeeds: BatchObservableCallback = (observer) => {
    for (const r of readFleetFeeds(feeds)) {
      const attrs = { [A.dependency]: r.dependency };
      if (r.ageSeconds !== undefined) observer.observe(o.fleetLatencyAge, r.ageSeconds, attrs);
      observer.observe(o.fleetLatencyStale, r.stale, attrs);
    }
  };
  const observables: Observable[] = Object.values(o);
  meter.addBatchObservableCallback(observeAll, observables);
  if (feeds.length > 0)
    meter.addBatchObservableCallback(observeFeeds, [o.fleetLatencyAge, o.fleetLatencyStale]);

  const stopCountingDrift = countDrift(options.driftMonitor, (name) => attachments.get(name));

  let detached = false;
  return {
    detach() {
      if (detached) return;
      detached = true;
      stopCountingDrift();
      meter.removeBatchObservableCallback(observeAll, observables);
      if (feeds.length > 0)
        meter.removeBatchObservableCallback(observeFeeds, [o.fleetLatencyAge, o.fleetLatencyStale]);
      for (const a of attachments.values()) {
        a.tally.detach();
        // What was recorded since the last collection still reaches the histograms.
        if (a.replays !== undefined) {
          replay(a.replays[0]);
          replay(a.replays[1]);
        }
        a.unregister?.();
      }
    },
  };
}

export type { AdmissionOtelInstrumentOptions } from './admission-otel.js';
export { instrumentAdmission } from './admission-otel.js';
export {
  createDurationProducer,
  type DurationDataPoint,
  type DurationMetricData,
  type DurationProducer,
} from './otel-producer.js';
