import type { DrillConfig } from '../services/spec.js';
import {
  DOMINANCE_MARGIN,
  LOOP_DELAY_BOUND_MS,
  RECOVERED_FOR_MS,
  RECOVERED_SUCCESS,
  SUCCESS_STANDARD_ERRORS,
} from './capacity-figures.js';
import type { ConfigFigures, DrillReport } from './drill-report.js';

type Row = [label: string, ...figures: string[], meaning: string];

const pct = (v: number | null) => (v === null ? '–' : `${(Math.round(v * 10_000) / 100).toFixed(2)} %`);

/**
 * The rows the finite-capacity supplier adds to the report: the trigger phase, each phase's success
 * against the supplier load it cost (and who dominates whom), and each column's event-loop delay.
 */
export function capacityRows(report: DrillReport, columns: readonly DrillConfig[]): Row[] {
  const row = (label: string, meaning: string, f: (c: ConfigFigures) => string): Row => [
    label,
    ...columns.map((config) => {
      const figures = report.configs[config];
      return figures?.capacity ? f(figures) : '—';
    }),
    meaning,
  ];
  const o = report.options;
  const rows: Row[] = [
    row(
      '/checkout success, trigger (capacity drop)',
      `Checkouts sent while every supplier instance served ${o.triggerFactor}× slower for ${(o.triggerDropMs / 1000).toFixed(1)} s, on a healthy fleet, that got a 200 within the user’s deadline.`,
      (c) => pct(c.capacity.trigger.successDuringDrop),
    ),
    row(
      'time to recover after the trigger',
      `From the end of the capacity drop until /checkout success stays ≥ ${RECOVERED_SUCCESS * 100} % for ${RECOVERED_FOR_MS / 1000} s; “never” when it does not within the phase: the load the clients added (retries of attempts that timed out in the queue) keeps the supplier above its capacity after the trigger has gone — a metastable failure.`,
      (c) =>
        c.capacity.trigger.recoverMs === null
          ? 'never'
          : `${(c.capacity.trigger.recoverMs / 1000).toFixed(1)} s`,
    ),
    row(
      'supplier queue, peak, trigger',
      'Most requests waiting for a supplier worker during the trigger phase, the instances’ peaks summed.',
      (c) => String(c.capacity.trigger.peakQueue),
    ),
  ];
  for (const phase of report.phases ?? []) {
    rows.push(
      row(
        `/checkout success @ supplier load, ${phase.label}`,
        `Checkouts of the phase that succeeded, and the requests the supplier received per checkout (originals, retries and hedges). “dominated” when another column had both more success (by > ${DOMINANCE_MARGIN.success * 100} point, and by more than ${SUCCESS_STANDARD_ERRORS} standard errors of the difference) and less load (by > ${DOMINANCE_MARGIN.load}).`,
        (c) => {
          const f = c.capacity.byPhase[phase.name];
          if (!f) return '–';
          const load = f.load === null ? '–' : `${f.load.toFixed(2)}×`;
          return `${pct(f.success)} @ ${load}${f.dominatedBy.length > 0 ? ' dominated' : ''}`;
        },
      ),
    );
  }
  rows.push(
    row(
      'event-loop delay p99, worst process',
      `The worst p99 event-loop delay among the column’s processes (users, shop, orders, inventory, supplier instances) over the timeline; “stalled” beyond ${LOOP_DELAY_BOUND_MS} ms, where the process measured the machine rather than its client.`,
      (c) => {
        const d = c.capacity.loopDelay;
        if (d === null) return '–';
        return `${Math.round(d.worst.p99Ms)} ms${d.stalled ? ' stalled' : ''}`;
      },
    ),
  );
  return rows;
}
