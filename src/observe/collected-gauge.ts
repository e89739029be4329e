import { Gauge, type Registry } from 'prom-client';
import { type MetricDefinition, prometheusName } from '../wire/metric-names.js';

/**
 * Registers a prom-client gauge that is emptied and refilled by `fill` at every scrape: its series
 * are exactly what `fill` sets, so a series that no longer applies disappears.
 */
export function collectedGauge(
  def: MetricDefinition,
  prefix: string,
  registers: Registry[],
  fill: (gauge: Gauge<string>) => void,
): void {
  new Gauge({
    name: prometheusName(def, prefix),
    help: def.help,
    labelNames: def.labels,
    registers,
    collect() {
      this.reset();
      fill(this);
    },
  });
}
