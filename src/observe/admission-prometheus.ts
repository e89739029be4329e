import { Counter, type Gauge, register as globalRegistry, type Registry } from 'prom-client';
import type { Admission, AdmissionRouteView } from '../admission/admission.js';
import { REFUSAL_REASONS } from '../admission/admission-decision.js';
import { InvalidOptionError } from '../errors.js';
import { CRITICALITY_LEVELS } from '../wire/criticality-header.js';
import {
  DURATION_BUCKETS_SECONDS,
  type MetricDefinition,
  PROMETHEUS_PREFIX,
  prometheusName,
  SERVER_METRICS,
} from '../wire/metric-names.js';
import { BucketedHistogram } from './bucketed-histogram.js';
import { collectedGauge } from './collected-gauge.js';

/** Options of {@link instrumentAdmission}. */
export interface AdmissionInstrumentOptions {
  /** Registry the metrics are registered in. @default prom-client's global `register` */
  registry?: Registry;
  /** Prefix replacing `prazo_` in every metric name (the dashboard and alert rules expect `prazo_`). @default 'prazo_' */
  prefix?: string;
}

/** Handle returned by {@link instrumentAdmission}. */
export interface AdmissionInstrumentation {
  /** Removes the admission's metrics from the registry. Idempotent. */
  detach(): void;
}

const PREFIX_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A counter series copied from the admission's plain numbers when the registry is read. */
interface Reported {
  labels: Record<string, string>;
  reported: number;
}

/**
 * Publishes a server admission's metrics (`prazo_server_*`, see docs/overload.md) in a prom-client
 * registry: admitted and refused requests by route (and reason, criticality), in-flight and queued
 * requests, the CoDel state, the queue's sojourn times and each route's expected service time.
 * The request path touches no prom-client object: everything is read from the admission at scrape
 * time. One admission per registry and prefix.
 *
 * @throws {InvalidOptionError} for an invalid `prefix`, or a registry that already holds these names.
 * @example
 * const admission = createAdmission({ maxInFlight: 64 });
 * instrumentAdmission(admission, { registry });
 */
export function instrumentAdmission(
  admission: Admission,
  options: AdmissionInstrumentOptions = {},
): AdmissionInstrumentation {
  if (typeof admission !== 'object' || admission === null || typeof admission.routes !== 'function')
    throw new InvalidOptionError('admission', 'the result of createAdmission()', admission);
  const registry = options.registry ?? globalRegistry;
  const prefix = options.prefix ?? PROMETHEUS_PREFIX;
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix))
    throw new InvalidOptionError('prefix', 'a Prometheus name prefix such as "prazo_"', prefix);
  const names = Object.values(SERVER_METRICS).map((m) => prometheusName(m, prefix));
  for (const name of names)
    if (registry.getSingleMetric(name))
      throw new InvalidOptionError(
        'registry',
        `a registry where ${name} is free (one admission per registry and prefix)`,
        'a registry with a conflicting metric',
      );
  const registers = [registry];

  const synced = (
    read: (route: AdmissionRouteView, sync: (labels: Record<string, string>, value: number) => void) => void,
  ) => {
    const series = new Map<string, Reported>();
    return function collect(this: Counter<string>): void {
      for (const route of admission.routes())
        read(route, (labels, value) => {
          const key = JSON.stringify(labels);
          let s = series.get(key);
          if (s === undefined) {
            if (value === 0) return;
            s = { labels, reported: 0 };
            series.set(key, s);
          }
          if (value > s.reported) {
            this.inc(s.labels, value - s.reported);
            s.reported = value;
          }
        });
    };
  };
  const m = SERVER_METRICS;
  new Counter({
    name: prometheusName(m.admitted, prefix),
    help: m.admitted.help,
    labelNames: m.admitted.labels,
    registers,
    collect: synced((route, sync) => {
      CRITICALITY_LEVELS.forEach((criticality, i) => {
        sync({ route: route.key, criticality }, route.admitted[i]!);
      });
    }),
  });
  new Counter({
    name: prometheusName(m.refused, prefix),
    help: m.refused.help,
    labelNames: m.refused.labels,
    registers,
    collect: synced((route, sync) => {
      REFUSAL_REASONS.forEach((reason, r) => {
        CRITICALITY_LEVELS.forEach((criticality, c) => {
          sync({ route: route.key, reason, criticality }, route.refused[r * 3 + c]!);
        });
      });
    }),
  });
  const gauge = (def: MetricDefinition, fill: (g: Gauge<string>) => void): void =>
    collectedGauge(def, prefix, registers, fill);
  gauge(m.inFlight, (g) => g.set(admission.inFlight));
  gauge(m.queueLength, (g) => g.set(admission.queueLength));
  gauge(m.queueOverloaded, (g) => g.set(admission.overloaded ? 1 : 0));
  gauge(m.expectedService, (g) => {
    for (const route of admission.routes())
      if (route.expectedMs !== undefined) g.set({ route: route.key }, route.expectedMs / 1000);
  });
  new BucketedHistogram(
    {
      name: prometheusName(m.queueSojourn, prefix),
      help: m.queueSojourn.help,
      labelNames: [],
      buckets: [...DURATION_BUCKETS_SECONDS],
      registers,
    },
    () => [{ labels: {}, buckets: admission.sojourn, series: 0 }],
  );

  let detached = false;
  return {
    detach() {
      if (detached) return;
      detached = true;
      for (const name of names) registry.removeSingleMetric(name);
    },
  };
}
