import { type BatchObservableResult, type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import type { Admission } from '../admission/admission.js';
import { REFUSAL_REASONS } from '../admission/admission-decision.js';
import { InvalidOptionError } from '../errors.js';
import { CRITICALITY_LEVELS } from '../wire/criticality-header.js';
import {
  DURATION_BUCKETS_SECONDS,
  type MetricDefinition,
  OTEL_ATTRIBUTES,
  SERVER_METRICS,
} from '../wire/metric-names.js';
import { createReplay, replay } from './otel-replay.js';
import { VERSION } from './otel-tracing.js';

/** Options of {@link instrumentAdmission}. */
export interface AdmissionOtelInstrumentOptions {
  /** Meter the instruments are created on. @default meterProvider.getMeter('prazo', version) */
  meter?: Meter;
  /** Provider of the default meter. @default the global provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
}

/**
 * Publishes a server admission's metrics (`prazo.server.*`, see docs/overload.md) through
 * OpenTelemetry: counters and gauges are observed at collection, the queue's sojourn times reach an
 * SDK histogram at collection too (nothing is recorded on the request path).
 *
 * @throws {InvalidOptionError} when `admission` is not what `createAdmission()` returns.
 * @example instrumentAdmission(admission, { meterProvider });
 */
export function instrumentAdmission(
  admission: Admission,
  options: AdmissionOtelInstrumentOptions = {},
): { detach(): void } {
  if (typeof admission !== 'object' || admission === null || typeof admission.routes !== 'function')
    throw new InvalidOptionError('admission', 'the result of createAdmission()', admission);
  const meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter('prazo', VERSION);
  const m = SERVER_METRICS;
  const describe = (def: MetricDefinition) => ({ description: def.help, unit: def.unit });
  const o = {
    admitted: meter.createObservableCounter(m.admitted.otel, describe(m.admitted)),
    refused: meter.createObservableCounter(m.refused.otel, describe(m.refused)),
    inFlight: meter.createObservableGauge(m.inFlight.otel, describe(m.inFlight)),
    queueLength: meter.createObservableGauge(m.queueLength.otel, describe(m.queueLength)),
    queueOverloaded: meter.createObservableGauge(m.queueOverloaded.otel, describe(m.queueOverloaded)),
    expectedService: meter.createObservableGauge(m.expectedService.otel, describe(m.expectedService)),
  };
  const sojourn = createReplay(
    admission.sojourn,
    meter.createHistogram(m.queueSojourn.otel, {
      ...describe(m.queueSojourn),
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_SECONDS] },
    }),
    [{}],
  );
  const route = OTEL_ATTRIBUTES.route;
  const criticalityKey = OTEL_ATTRIBUTES.criticality;
  const reasonKey = OTEL_ATTRIBUTES.reason;
  const observeAll = (observer: BatchObservableResult): void => {
    for (const r of admission.routes()) {
      CRITICALITY_LEVELS.forEach((criticality, c) => {
        const admitted = r.admitted[c]!;
        if (admitted > 0)
          observer.observe(o.admitted, admitted, { [route]: r.key, [criticalityKey]: criticality });
        REFUSAL_REASONS.forEach((reason, i) => {
          const refused = r.refused[i * 3 + c]!;
          if (refused > 0)
            observer.observe(o.refused, refused, {
              [route]: r.key,
              [reasonKey]: reason,
              [criticalityKey]: criticality,
            });
        });
      });
      if (r.expectedMs !== undefined)
        observer.observe(o.expectedService, r.expectedMs / 1000, { [route]: r.key });
    }
    observer.observe(o.inFlight, admission.inFlight);
    observer.observe(o.queueLength, admission.queueLength);
    observer.observe(o.queueOverloaded, admission.overloaded ? 1 : 0);
    replay(sojourn);
  };
  const observables = Object.values(o);
  meter.addBatchObservableCallback(observeAll, observables);
  let detached = false;
  return {
    detach() {
      if (detached) return;
      detached = true;
      meter.removeBatchObservableCallback(observeAll, observables);
      replay(sojourn);
    },
  };
}
