import type { ConfigFigures, DrillReport } from './drill-report.js';

const pct = (v: number | null) => (v === null ? '–' : `${(Math.round(v * 10_000) / 100).toFixed(2)} %`);
const ms = (v: number | null) => (v === null ? '–' : `${Math.round(v)} ms`);
const times = (v: number | null) => (v === null ? '–' : `${v.toFixed(2)}×`);
const ratio = (v: number | null) => (v === null ? '–' : v.toFixed(3));
const at = (v: number | null) => (v === null ? 'never' : `+${(v / 1000).toFixed(1)} s`);

/** The report's figures as rows `[what, naive, prazo]`, shared by the terminal table and the pages. */
export function reportRows(report: DrillReport): Array<[string, string, string]> {
  const { naive, prazo } = report.configs;
  const row = (label: string, f: (c: ConfigFigures) => string): [string, string, string] => [
    label,
    f(naive),
    f(prazo),
  ];
  return [
    row('independent route (/catalog) success, degradation', (c) =>
      pct(c.independentSuccessDuringDegradation),
    ),
    row('/checkout success, degradation', (c) => pct(c.byPhase.degrade.checkout.successRate)),
    row(
      'user-facing /checkout p50 / p99 (whole run)',
      (c) => `${ms(c.checkout.p50Ms)} / ${ms(c.checkout.p99Ms)}`,
    ),
    row('user-facing /catalog p99, degradation', (c) => ms(c.byPhase.degrade.catalog.p99Ms)),
    row(
      'supplier load amplification, error burst (plateau)',
      (c) => `${times(c.burstAmplification)} (${times(c.burstPlateauAmplification)})`,
    ),
    row('supplier requests after the user’s deadline', (c) => String(c.afterDeadline)),
    row(`peak pool occupancy (of ${report.options.pool})`, (c) => String(c.peakPoolInUse)),
    row('peak retry ratio, error burst', (c) => ratio(c.peakRetryRatio)),
    row(`retry-ratio alert (≥ ${report.options.retryRatioAlert}) after 503s began`, (c) =>
      at(c.retryRatioAlertAfterMs),
    ),
    row(`error-rate alert (≥ ${pct(report.options.errorRateAlert)}) after 503s began`, (c) =>
      at(c.errorRateAlertAfterMs),
    ),
    row('retry-ratio alert lead over the error-rate alert', (c) =>
      c.retryAlertLeadMs === null ? '–' : `${(c.retryAlertLeadMs / 1000).toFixed(1)} s`,
    ),
    row(
      'tail /checkout p99 hedged / unhedged',
      (c) => `${ms(c.tail.hedgedP99Ms)} / ${ms(c.tail.unhedgedP99Ms)}`,
    ),
    row(
      'tail supplier-call p99 hedged / unhedged (edge)',
      (c) => `${ms(c.tail.edgeHedgedP99Ms)} / ${ms(c.tail.edgeUnhedgedP99Ms)}`,
    ),
    row(
      'hedges / all extra attempts of hedged requests, tail',
      (c) => `${pct(c.tail.hedgeShare)} / ${pct(c.tail.hedgedExtraAttemptShare)}`,
    ),
    row('per-attempt timeout at the edge', (c) => ms(c.edgeTimeoutMs)),
  ];
}

/** The report as a plain-text table, with the acceptance checks under it. */
export function formatReportTable(report: DrillReport): string {
  const rows: Array<[string, string, string]> = [['', 'naive', 'prazo'], ...reportRows(report)];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: [string, string, string]) =>
    `${r[0].padEnd(widths[0]!)}  ${r[1].padStart(widths[1]!)}  ${r[2].padStart(widths[2]!)}`;
  const out = [
    line(rows[0]!),
    '-'.repeat(widths[0]! + widths[1]! + widths[2]! + 4),
    ...rows.slice(1).map(line),
    '',
  ];
  for (const check of report.checks)
    out.push(`${check.pass ? 'PASS' : 'FAIL'}  ${check.name} — ${check.detail}`);
  return `${out.join('\n')}\n`;
}
