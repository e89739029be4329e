/**
 * `prazo/prometheus`: prazo's metrics through prom-client.
 *
 * @packageDocumentation
 */
import { Counter, type Gauge, register as globalRegistry, type Registry } from 'prom-client';
import { InvalidOptionError } from '../errors.js';
import type { DriftDirection, DriftEventSource } from '../latency/drift-check.js';
import type { DurationBuckets } from '../latency/duration-buckets.js';
import {
  DURATION_BUCKETS_SECONDS,
  LABEL_VALUES,
  METRICS,
  type MetricDefinition,
  PROMETHEUS_PREFIX,
  prometheusName,
} from '../wire/metric-names.js';
import { BucketedHistogram, type BucketSeries } from './bucketed-histogram.js';
import { collectedGauge as registerCollectedGauge } from './collected-gauge.js';
import {
  type FleetFeedReading,
  type FleetFeedView,
  readFleetFeeds,
  toFleetFeeds,
} from './fleet-feed-view.js';
import { type InstanceFigures, type InstanceSeries, instanceFigures } from './instance-series.js';
import {
  type InstrumentableDependency,
  type InstrumentTarget,
  type OverloadView,
  toDependencies,
} from './source.js';
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
export type { MetricDefinition, MetricKey, MetricLabel, MetricType } from '../wire/metric-names.js';
export {
  DURATION_BUCKETS_SECONDS,
  LABEL_VALUES,
  METRICS,
  PROMETHEUS_PREFIX,
  prometheusName,
  prometheusSeriesNames,
} from '../wire/metric-names.js';
export type { FleetFeedView } from './fleet-feed-view.js';
export type { InstrumentableDependency, InstrumentTarget } from './source.js';

/** Options of {@link instrument}. */
export interface PrometheusInstrumentOptions {
  /** Registry the metrics are registered in. @default prom-client's global `register` */
  registry?: Registry;
  /**
   * Prefix replacing `prazo_` in every metric name (the dashboard and alert rules expect `prazo_`).
   * @default 'prazo_'
   */
  prefix?: string;
  /** A drift monitor whose `drift` and `recalibrated` events feed `prazo_drift_events_total` and `prazo_recalibrations_total`. */
  driftMonitor?: DriftEventSource;
  /**
   * Fleet latency feeds (`createFleetLatencyFeed()`) whose staleness feeds
   * `prazo_fleet_latency_age_seconds` and `prazo_fleet_latency_stale`, labelled by the feed's target.
   */
  fleetLatency?: FleetFeedView | Iterable<FleetFeedView>;
}

/** Handle returned by {@link instrument}. */
export interface Instrumentation {
  /**
   * Stops listening. Counters and histograms keep their last values (a counter must not go back);
   * the gauges of the detached dependencies disappear from the next scrape. Idempotent.
   */
  detach(): void;
}

type Labels = Record<string, string>;

/** A counter series fed from a tally: copied into prom-client as a delta when the metric is read. */
interface CounterSeries {
  labels: Labels;
  read: () => number;
  reported: number;
}

interface Attachment {
  dependency: InstrumentableDependency;
  tally: Tally;
  drift: Record<DriftDirection, number>;
  recalibrations: number;
  counters: Map<Counter<string>, CounterSeries[]>;
}

interface RegistryState {
  attached: Map<string, Attachment>;
  feeds: Set<FleetFeedView>;
  counters: Record<CounterKey, Counter<string>>;
  /** Duration buckets by dependency name, kept after `detach()`: a histogram never goes back. */
  durations: Map<string, TallyDurations>;
}

type CounterKey =
  | 'requests'
  | 'attempts'
  | 'budgetExhausted'
  | 'fastFails'
  | 'refused'
  | 'timeouts'
  | 'hedges'
  | 'hedgesWon'
  | 'driftEvents'
  | 'recalibrations'
  | 'requeues'
  | 'serverTimingIgnored'
  | 'instanceEjections'
  | 'membershipRefreshFailures'
  | 'limited';

const states = new WeakMap<Registry, Map<string, RegistryState>>();
const PREFIX_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * Publishes the metrics of one dependency, several, or a client's dependencies in a prom-client registry.
 *
 * The request path only increments plain numbers (counters are copied into prom-client when the registry
 * is read) and observes the two duration histograms. Gauges — retry ratio, configured timeouts, healthy
 * p95/p99, timeout ÷ p99 — are read from the dependency at scrape time. Several dependencies, and several
 * `instrument()` calls, share one set of metrics per registry; each dependency is one `dependency` label.
 *
 * @throws {InvalidOptionError} for an invalid `prefix`, a dependency name already instrumented on the
 *   registry, or a metric name taken in the registry by a metric prazo did not create.
 * @example
 * import { Registry } from 'prom-client';
 * import { instrument } from 'prazo/prometheus';
 * const registry = new Registry();
 * const metrics = instrument(payments, { registry });
 * // GET /metrics → res.end(await registry.metrics())
 * metrics.detach();
 * @see docs/observability.md for the metrics table, the alert rules and the dashboard.
 */
export function instrument(
  target: InstrumentTarget,
  options: PrometheusInstrumentOptions = {},
): Instrumentation {
  const dependencies = toDependencies(target);
  const registry = options.registry ?? globalRegistry;
  const prefix = options.prefix ?? PROMETHEUS_PREFIX;
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidOptionError('prefix', 'a Prometheus name prefix such as "prazo_"', prefix);
  }
  const state = stateFor(registry, prefix);
  const feeds = toFleetFeeds(options.fleetLatency);
  const seen = new Set<string>();
  for (const d of dependencies) {
    if (state.attached.has(d.name) || seen.has(d.name)) {
      throw new InvalidOptionError(
        'target',
        `dependencies with names not yet instrumented on this registry`,
        d.name,
      );
    }
    seen.add(d.name);
  }

  const mine = new Map<string, Attachment>();
  for (const dependency of dependencies) {
    const attachment = attach(state, dependency);
    mine.set(dependency.name, attachment);
    state.attached.set(dependency.name, attachment);
  }

  const stopCountingDrift = countDrift(options.driftMonitor, (name) => mine.get(name));
  for (const feed of feeds) state.feeds.add(feed);

  let detached = false;
  return {
    detach() {
      if (detached) return;
      detached = true;
      stopCountingDrift();
      for (const feed of feeds) state.feeds.delete(feed);
      for (const [name, a] of mine) {
        a.tally.detach();
        for (const [counter, series] of a.counters) syncCounter(counter, series);
        if (state.attached.get(name) === a) state.attached.delete(name);
      }
    },
  };
}

function attach(state: RegistryState, dependency: InstrumentableDependency): Attachment {
  const name = dependency.name;
  let durations = state.durations.get(name);
  if (durations === undefined) {
    durations = tallyDurations();
    state.durations.set(name, durations);
  }
  const tally = createTally(dependency, durations);
  const a: Attachment = {
    dependency,
    tally,
    ...driftCounts(),
    counters: new Map(),
  };
  const add = (key: CounterKey, labels: Labels, read: () => number): void => {
    const counter = state.counters[key];
    let list = a.counters.get(counter);
    if (!list) {
      list = [];
      a.counters.set(counter, list);
    }
    const full = { dependency: name, ...labels };
    counter.inc(full, 0); // the series exists from the start, so rate() and alerts see its first increase
    list.push({ labels: full, read, reported: 0 });
  };
  for (const outcome of LABEL_VALUES.outcome) add('requests', { outcome }, () => tally.requests[outcome]);
  for (const kind of LABEL_VALUES.kind) add('attempts', { kind }, () => tally.attempts[kind]);
  for (const purpose of LABEL_VALUES.purpose)
    add('budgetExhausted', { purpose }, () => tally.budgetExhausted[purpose]);
  add('fastFails', {}, () => tally.fastFails);
  add('refused', {}, () => tally.refused);
  for (const phase of LABEL_VALUES.phase) add('timeouts', { phase }, () => tally.timeouts[phase]);
  add('hedges', {}, () => tally.hedges);
  add('hedgesWon', {}, () => tally.hedgesWon);
  for (const direction of LABEL_VALUES.direction) add('driftEvents', { direction }, () => a.drift[direction]);
  add('recalibrations', {}, () => a.recalibrations);
  add('requeues', {}, () => tally.requeues);
  for (const problem of LABEL_VALUES.problem)
    add('serverTimingIgnored', { problem }, () => tally.serverTimingIgnored[problem]);
  add('instanceEjections', {}, () => tally.ejections);
  add('membershipRefreshFailures', {}, () => tally.membershipFailures);
  for (const reason of LABEL_VALUES.reason) add('limited', { reason }, () => tally.limited[reason]);
  return a;
}

function stateFor(registry: Registry, prefix: string): RegistryState {
  let byPrefix = states.get(registry);
  if (!byPrefix) {
    byPrefix = new Map();
    states.set(registry, byPrefix);
  }
  const existing = byPrefix.get(prefix);
  if (existing) return existing;

  for (const def of Object.values(METRICS)) {
    const name = prometheusName(def, prefix);
    if (registry.getSingleMetric(name)) {
      throw new InvalidOptionError(
        'registry',
        `a registry where ${name} is free (it holds a ${name} that prazo did not register)`,
        'a registry with a conflicting metric',
      );
    }
  }

  const attached = new Map<string, Attachment>();
  const registers = [registry];
  const counter = (def: MetricDefinition): Counter<string> => {
    const metric: Counter<string> = new Counter({
      name: prometheusName(def, prefix),
      help: def.help,
      labelNames: def.labels,
      registers,
      collect() {
        for (const a of attached.values()) {
          const series = a.counters.get(metric);
          if (series) syncCounter(metric, series);
        }
      },
    });
    return metric;
  };
  const gauge = (def: MetricDefinition, fill: (gauge: Gauge<string>, a: Attachment) => void): void =>
    collectedGauge(def, (g) => {
      for (const a of attached.values()) fill(g, a);
    });
  /** A gauge refilled from scratch at every scrape. */
  const collectedGauge = (def: MetricDefinition, fill: (gauge: Gauge<string>) => void): void =>
    registerCollectedGauge(def, prefix, registers, fill);
  const durations = new Map<string, TallyDurations>();
  const histogram = (def: MetricDefinition, pick: (d: TallyDurations) => DurationBuckets): void => {
    const label = def.labels[1] === 'outcome' ? 'outcome' : 'kind';
    new BucketedHistogram(
      {
        name: prometheusName(def, prefix),
        help: def.help,
        labelNames: def.labels,
        buckets: [...DURATION_BUCKETS_SECONDS],
        registers,
      },
      () => {
        const out: BucketSeries[] = [];
        for (const [dependency, d] of durations) {
          LABEL_VALUES[label].forEach((value, series) => {
            out.push({ labels: { dependency, [label]: value }, buckets: pick(d), series });
          });
        }
        return out;
      },
    );
  };
  histogram(METRICS.requestDuration, (d) => d.request);
  histogram(METRICS.attemptDuration, (d) => d.attempt);

  const feeds = new Set<FleetFeedView>();
  const state: RegistryState = {
    attached,
    feeds,
    counters: {
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
      membershipRefreshFailures: counter(METRICS.membershipRefreshFailures),
      limited: counter(METRICS.limited),
    },
    durations,
  };
  gauge(METRICS.retryRatio, (g, a) => {
    g.set({ dependency: a.dependency.name }, a.dependency.budget().ratio);
  });
  gauge(METRICS.timeoutSeconds, (g, a) => {
    const { connectMs, readMs } = a.dependency.policy();
    g.set({ dependency: a.dependency.name, phase: 'connect' }, connectMs / 1000);
    g.set({ dependency: a.dependency.name, phase: 'read' }, readMs / 1000);
  });
  gauge(METRICS.healthyLatency, (g, a) => {
    const healthy = readHealthyLatency(a.dependency);
    if (!healthy) return; // no healthy slice yet: no series rather than a misleading 0
    g.set({ dependency: a.dependency.name, quantile: '0.95' }, healthy.p95Ms / 1000);
    g.set({ dependency: a.dependency.name, quantile: '0.99' }, healthy.p99Ms / 1000);
  });
  gauge(METRICS.timeoutP99Ratio, (g, a) => {
    const healthy = readHealthyLatency(a.dependency);
    if (!healthy || healthy.p99Ms <= 0) return;
    g.set({ dependency: a.dependency.name }, a.dependency.policy().readMs / healthy.p99Ms);
  });
  // Per-instance gauges: one reading of the instances per scrape serves the four of them.
  const figures = new Map<Attachment, InstanceFigures>();
  const figuresOf = (a: Attachment): InstanceFigures | undefined => {
    if (a.dependency.instances === undefined) return undefined;
    let f = figures.get(a);
    if (f === undefined) {
      f = instanceFigures(a.dependency.instances());
      figures.set(a, f);
      // Forgotten once the scrape's collect callbacks have run.
      queueMicrotask(() => figures.delete(a));
    }
    return f;
  };
  gauge(METRICS.instances, (g, a) => {
    const f = figuresOf(a);
    if (!f) return;
    for (const state of LABEL_VALUES.state) g.set({ dependency: a.dependency.name, state }, f.byState[state]);
  });
  const instanceGauge = (def: MetricDefinition, read: (s: InstanceSeries) => number | undefined): void =>
    gauge(def, (g, a) => {
      for (const s of figuresOf(a)?.series ?? []) {
        const value = read(s);
        if (value !== undefined) g.set({ dependency: a.dependency.name, instance: s.instance }, value);
      }
    });
  instanceGauge(METRICS.instanceShare, (s) => s.share);
  instanceGauge(METRICS.instanceInFlight, (s) => s.inFlight);
  instanceGauge(METRICS.instanceLatency, (s) => s.latencySeconds);
  // Overload gauges: absent for a dependency whose protection is off.
  const overloadGauge = (def: MetricDefinition, read: (o: OverloadView) => number | undefined): void =>
    gauge(def, (g, a) => {
      const view = a.dependency.overload?.();
      const value = view === undefined ? undefined : read(view);
      if (value !== undefined) g.set({ dependency: a.dependency.name }, value);
    });
  overloadGauge(METRICS.concurrencyLimit, (o) => o.concurrency?.limit);
  overloadGauge(METRICS.concurrencyInFlight, (o) => o.concurrency?.inFlight);
  overloadGauge(METRICS.concurrencyQueued, (o) => o.concurrency?.queued);
  overloadGauge(METRICS.throttleProbability, (o) => o.throttle?.probability);
  const feedGauge = (def: MetricDefinition, read: (r: FleetFeedReading) => number | undefined): void =>
    collectedGauge(def, (g) => {
      for (const r of readFleetFeeds([...feeds])) {
        const value = read(r);
        if (value !== undefined) g.set({ dependency: r.dependency }, value);
      }
    });
  feedGauge(METRICS.fleetLatencyAge, (r) => r.ageSeconds);
  feedGauge(METRICS.fleetLatencyStale, (r) => r.stale);
  byPrefix.set(prefix, state);
  return state;
}

function syncCounter(counter: Counter<string>, series: CounterSeries[]): void {
  for (const s of series) {
    const value = s.read();
    if (value > s.reported) {
      counter.inc(s.labels, value - s.reported);
      s.reported = value;
    }
  }
}

export type { AdmissionInstrumentation, AdmissionInstrumentOptions } from './admission-prometheus.js';
export { instrumentAdmission } from './admission-prometheus.js';
