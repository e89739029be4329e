import { textTable } from '../text-table.js';
import type { OverloadFigures } from './overload-run.js';

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const pct = (value: number) => `${round(value * 100)} %`;
const ms = (value: number | null) => (value === null ? 'n/a' : `${round(value)} ms`);

/**
 * The overload experiment's rows: `[label, one figure per configuration, what the row means]`, in the
 * order of `figures` (the drill's text report and its page both show them).
 */
export function overloadRows(figures: readonly OverloadFigures[]): string[][] {
  const row = (label: string, value: (f: OverloadFigures) => string, why: string) => [
    label,
    ...figures.map(value),
    why,
  ];
  return [
    row(
      'goodput',
      (f) => `${round(f.goodputRps)} rps`,
      'answers that reached the user before the deadline, per second',
    ),
    row('goodput ÷ capacity', (f) => pct(f.goodputShare), 'of what the supplier can serve'),
    row('answered in time', (f) => pct(f.successShare), 'of the user requests offered'),
    row(
      'admitted p50 / p99',
      (f) => `${ms(f.admittedP50Ms)} / ${ms(f.admittedP99Ms)}`,
      'of the answers in time',
    ),
    row('answers after the deadline', (f) => String(f.lateSuccesses), 'work the user no longer waited for'),
    row(
      'supplier work for nobody',
      (f) => String(f.supplierWorkForNobody),
      'requests finished after their caller had gone',
    ),
    row('supplier requests per user request', (f) => `${round(f.amplification, 2)}×`, 'retries included'),
    row('supplier queue, longest', (f) => String(f.supplierPeakQueue), 'requests waiting for a worker'),
  ];
}

/** The heading of the overload experiment: what was offered to what. */
export function overloadHeading(figures: readonly OverloadFigures[]): string {
  const first = figures[0];
  if (first === undefined) return 'Overload: not run';
  return `Overload: ${round(first.offeredRps)} rps offered open loop to a supplier that serves ${round(
    first.capacityRps,
  )} rps (${round(first.offeredRps / first.capacityRps, 1)}× its capacity)`;
}

/** The experiment as a plain-text table. */
export function formatOverloadTable(figures: readonly OverloadFigures[]): string {
  const rows = [['', ...figures.map((f) => f.config)], ...overloadRows(figures).map((r) => r.slice(0, -1))];
  return [overloadHeading(figures), ...textTable(rows)].join('\n');
}
