import type { ConfigFigures } from '../report/drill-report.js';
import type { DrillConfig, PerConfig } from '../services/spec.js';

/** A row of the table on which configurations can be ranked. */
interface RankedRow {
  label: string;
  value(c: ConfigFigures): number | null;
  better: 'higher' | 'lower';
  /** Two values closer than this are a match, not a win. */
  tolerance(prazo: number): number;
  show(value: number): string;
}

const percent = (v: number) => `${(v * 100).toFixed(2)} %`;
const millis = (v: number) => `${Math.round(v)} ms`;
const relative = (share: number, floor: number) => (prazo: number) =>
  Math.max(floor, Math.abs(prazo) * share);

/** The rows a peer is compared with prazo on (the measured ones; settings are not compared). */
export const RANKED_ROWS: readonly RankedRow[] = Object.freeze([
  {
    label: 'independent route (/catalog) success, degradation',
    value: (c) => c.independentSuccessDuringDegradation,
    better: 'higher',
    tolerance: () => 0.001,
    show: percent,
  },
  {
    label: '/checkout goodput, degradation',
    value: (c) => c.byPhase.degrade.checkout.successRate,
    better: 'higher',
    tolerance: () => 0.005,
    show: percent,
  },
  {
    label: '/checkout success, error burst',
    value: (c) => c.byPhase.burst.checkout.successRate,
    better: 'higher',
    tolerance: () => 0.005,
    show: percent,
  },
  {
    label: '/checkout success, whole run',
    value: (c) => c.checkout.successRate,
    better: 'higher',
    tolerance: () => 0.005,
    show: percent,
  },
  {
    label: '/checkout success, one instance sick, one slow',
    value: (c) => c.byPhase.fleet?.checkout.successRate ?? null,
    better: 'higher',
    tolerance: () => 0.005,
    show: percent,
  },
  {
    label: 'share of supplier requests sent to the sick instance',
    value: (c) => c.fleet?.sickShare ?? null,
    better: 'lower',
    tolerance: () => 0.01,
    show: percent,
  },
  {
    label: 'share sent to the slow instance',
    value: (c) => c.fleet?.slowShare ?? null,
    better: 'lower',
    tolerance: () => 0.02,
    show: percent,
  },
  {
    label: 'user-facing /checkout p99, one instance sick, one slow',
    value: (c) => c.byPhase.fleet?.checkout.p99Ms ?? null,
    better: 'lower',
    tolerance: relative(0.05, 5),
    show: millis,
  },
  {
    label: 'user-facing /checkout p50',
    value: (c) => c.checkout.p50Ms,
    better: 'lower',
    tolerance: relative(0.05, 2),
    show: millis,
  },
  {
    label: 'user-facing /checkout p99',
    value: (c) => c.checkout.p99Ms,
    better: 'lower',
    tolerance: relative(0.05, 5),
    show: millis,
  },
  {
    label: 'supplier load amplification, error burst',
    value: (c) => c.burstAmplification,
    better: 'lower',
    tolerance: () => 0.01,
    show: (v) => `${v.toFixed(3)}×`,
  },
  {
    label: 'supplier requests after the user’s deadline',
    value: (c) => c.afterDeadline,
    better: 'lower',
    tolerance: () => 0,
    show: String,
  },
  {
    label: 'peak pool occupancy',
    value: (c) => c.peakPoolInUse,
    better: 'lower',
    tolerance: relative(0.1, 1),
    show: String,
  },
  {
    label: 'peak retry ratio, error burst',
    value: (c) => c.peakRetryRatio,
    better: 'lower',
    tolerance: () => 0.01,
    show: (v) => v.toFixed(3),
  },
]);

/**
 * Where each peer matches or beats prazo, row by row, in plain sentences — the report never lets a
 * column of figures say it alone. A match is a difference within the row's tolerance (about the
 * run-to-run noise of the figure); a peer that does worse on a row is not mentioned for it.
 */
export function comparePeers(configs: PerConfig<ConfigFigures>, columns: readonly DrillConfig[]): string[] {
  const prazo = configs.prazo;
  const lines: string[] = [];
  for (const peer of columns) {
    if (peer === 'naive' || peer === 'prazo') continue;
    const figures = configs[peer];
    if (!figures) continue;
    const found: string[] = [];
    for (const row of RANKED_ROWS) {
      const mine = row.value(figures);
      const theirs = row.value(prazo);
      if (mine === null || theirs === null) continue;
      const gain = row.better === 'higher' ? mine - theirs : theirs - mine;
      const tolerance = row.tolerance(theirs);
      if (gain > tolerance)
        found.push(`beats prazo on ${row.label} (${row.show(mine)} vs ${row.show(theirs)})`);
      else if (gain >= -tolerance)
        found.push(`matches prazo on ${row.label} (${row.show(mine)} vs ${row.show(theirs)})`);
    }
    lines.push(
      found.length === 0 ? `${peer} matches or beats prazo on no row.` : `${peer} ${found.join('; ')}.`,
    );
  }
  return lines;
}
