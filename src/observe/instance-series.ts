import { type LABEL_VALUES, MAX_INSTANCE_LABELS, OTHER_INSTANCES } from '../wire/metric-names.js';
import type { InstanceView } from './source.js';

/** State of an instance as the metrics count it. */
export type InstanceStateLabel = (typeof LABEL_VALUES.state)[number];

/** One `instance` series of the per-instance gauges. */
export interface InstanceSeries {
  /** The origin, or `other` for the instances beyond `MAX_INSTANCE_LABELS`, summed. */
  instance: string;
  inFlight: number;
  share: number;
  /** Peak-EWMA in seconds (for `other`, the largest); undefined before any answer. */
  latencySeconds: number | undefined;
}

/** What the per-instance metrics of one dependency show at one collection. */
export interface InstanceFigures {
  byState: Record<InstanceStateLabel, number>;
  series: InstanceSeries[];
}

/**
 * Reads a dependency's instances into the figures the adapters publish, with bounded label
 * cardinality: the first `maxLabels` instances (in the order the dependency lists them) keep their
 * origin as `instance` label; the others are summed into one `other` series (in flight and share
 * added, latency the largest). Pure.
 */
export function instanceFigures(
  instances: readonly InstanceView[],
  maxLabels: number = MAX_INSTANCE_LABELS,
): InstanceFigures {
  const byState = { up: 0, down: 0, ejected: 0, probing: 0, draining: 0 };
  const series: InstanceSeries[] = [];
  let other: InstanceSeries | undefined;
  for (let i = 0; i < instances.length; i++) {
    const v = instances[i]!;
    if (v.state in byState) byState[v.state]++;
    const latencySeconds = v.ewmaMs === undefined ? undefined : v.ewmaMs / 1000;
    if (i < maxLabels) {
      series.push({ instance: v.origin, inFlight: v.inFlight, share: v.share, latencySeconds });
      continue;
    }
    if (other === undefined) {
      other = { instance: OTHER_INSTANCES, inFlight: 0, share: 0, latencySeconds: undefined };
      series.push(other);
    }
    other.inFlight += v.inFlight;
    other.share += v.share;
    if (latencySeconds !== undefined && !(latencySeconds <= (other.latencySeconds ?? -1)))
      other.latencySeconds = latencySeconds;
  }
  return { byState, series };
}
