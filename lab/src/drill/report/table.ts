import { formatOverloadTable } from '../../overload/overload-table.js';
import { textTable } from '../../text-table.js';
import { budgetWindowMs } from '../calibrate-hop.js';
import { SUPPLIER_INSTANCES } from '../phase-plan.js';
import type { DrillConfig } from '../services/spec.js';
import { formatWaterfallsText } from '../waterfall/render.js';
import { capacityRows } from './capacity-rows.js';
import type { ConfigFigures, DrillReport } from './drill-report.js';

const pct = (v: number | null) => (v === null ? '–' : `${(Math.round(v * 10_000) / 100).toFixed(2)} %`);
const ms = (v: number | null) => (v === null ? '–' : `${Math.round(v)} ms`);
const times = (v: number | null) => (v === null ? '–' : `${v.toFixed(3)}×`);
const ratio = (v: number | null) => (v === null ? '–' : v.toFixed(3));
const at = (v: number | null) => (v === null ? 'never' : `+${(v / 1000).toFixed(1)} s`);
/** Shown where a figure does not apply to a configuration (naive never hedges). */
const NOT_APPLICABLE = '—';

/**
 * One row of the report: what it measures, one figure per configuration (in the order of
 * {@link reportColumns}: naive, prazo, then the peers that ran), and what it means.
 */
export type ReportRow = [label: string, ...figures: string[], meaning: string];

/** The configurations of the report, in column order. */
export function reportColumns(report: DrillReport): DrillConfig[] {
  return report.columns ?? ['naive', 'prazo'];
}

/** The report's figures as rows, shared by the terminal table and the pages (which show the meaning). */
export function reportRows(report: DrillReport): ReportRow[] {
  const { prazo } = report.configs;
  const columns = reportColumns(report);
  const figuresOf = (config: DrillConfig) => report.configs[config] ?? null;
  const o = report.options;
  const row = (label: string, meaning: string, f: (c: ConfigFigures) => string): ReportRow => [
    label,
    ...columns.map((config) => {
      const figures = figuresOf(config);
      return figures ? f(figures) : NOT_APPLICABLE;
    }),
    meaning,
  ];
  /** A hedging figure: prazo's own, "—" for the others, which send no hedge. */
  const hedging = (label: string, meaning: string, f: (c: ConfigFigures) => string): ReportRow => [
    label,
    ...columns.map((config) => (config === 'prazo' ? f(prazo) : NOT_APPLICABLE)),
    meaning,
  ];
  return [
    row(
      'independent route (/catalog) success, degradation',
      'Catalog requests sent during the degradation that got a 200 before the user gave up. The catalog never calls the supplier: it fails only when the slow supplier has taken every slot of the shared pool.',
      (c) => pct(c.independentSuccessDuringDegradation),
    ),
    row(
      '/checkout goodput, degradation',
      `Checkouts sent during the degradation that reached the user with a 200 within the user’s ${o.userDeadlineMs} ms deadline. The supplier answers at ${o.naiveTimeoutMs / 1000} s, so both stay near 0; only checkouts sent in the phase’s last instants can finish, once the supplier is back. Naive holds a checkout until then, so those of the last ~2 s still succeed; prazo ends each attempt at its calibrated read timeout, so a checkout fails within about half a second and fewer are still waiting when the supplier returns. What that buys is the catalog row above.`,
      (c) => pct(c.byPhase.degrade.checkout.successRate),
    ),
    row(
      '/checkout success, error burst',
      'Checkouts sent during the error burst that got a 200 before the user gave up. A circuit breaker that opens stops the retries (and the load) by refusing every call, healthy answers included; a retry budget keeps sending originals and lets 10 % extra through. Read it with the amplification row below.',
      (c) => pct(c.byPhase.burst.checkout.successRate),
    ),
    row(
      '/checkout success, whole run',
      'Checkouts over the whole run that got a 200 before the user gave up, every phase together.',
      (c) => pct(c.checkout.successRate),
    ),
    row(
      '/checkout success, one instance sick, one slow',
      `Checkouts sent while one of the ${SUPPLIER_INSTANCES} supplier instances answered 503 to ${Math.round(o.fleetSickShare * 100)} % of its requests and another answered ${o.fleetSlowExtraMs} ms later than the healthy one, that got a 200 before the user gave up. Naive and the libraries take the instances in turn; prazo balances by latency and ejects the sick one; HAProxy balances by its own configuration, with health checks.`,
      (c) => pct(c.byPhase.fleet?.checkout.successRate ?? null),
    ),
    row(
      'share of supplier requests sent to the sick instance',
      `Of the requests the supplier instances received during that phase (counted by the instances themselves), the share the sick one got: round-robin gives it its third and more, since its failures are retried; a balancer that ejects it gives it a few probes.`,
      (c) => pct(c.fleet?.sickShare ?? null),
    ),
    row(
      'share sent to the slow instance',
      `The same for the instance ${o.fleetSlowExtraMs} ms slower than the healthy one.`,
      (c) => pct(c.fleet?.slowShare ?? null),
    ),
    row(
      'user-facing /checkout p99, one instance sick, one slow',
      'How long users waited for a checkout during that phase (p99; a failure counts at the time the user saw it).',
      (c) => ms(c.byPhase.fleet?.checkout.p99Ms ?? null),
    ),
    row(
      'user-facing /checkout p50 / p99 (whole run)',
      'How long users waited for a checkout over the whole run; a failure counts at the time the user saw it.',
      (c) => `${ms(c.checkout.p50Ms)} / ${ms(c.checkout.p99Ms)}`,
    ),
    row(
      'user-facing /catalog p99, degradation',
      'How long users waited for the independent route while the supplier was degraded.',
      (c) => ms(c.byPhase.degrade.catalog.p99Ms),
    ),
    row(
      'supplier load amplification, error burst (plateau)',
      `Requests the supplier received per original during the 503 burst (whole phase, and its plateau in brackets). Naive retries blindly: ≈ 1 + s + s² with s the 503 share. prazo’s retry budget allows 10 % extra attempts over its ${budgetWindowMs(o) / 1000} s window; its bucketed window really guarantees ${times(prazo.burstAmplificationBound)} here, and the exact figure is checked against that.`,
      (c) => `${times(c.burstAmplification)} (${times(c.burstPlateauAmplification)})`,
    ),
    row(
      'supplier requests after the user’s deadline',
      'Requests that reached the supplier after the user had already given up: work for nobody, counted by the supplier double.',
      (c) => String(c.afterDeadline),
    ),
    row(
      `peak pool occupancy (of ${o.pool})`,
      'Highest number of the shop’s shared slots in use at once: the resource a timeout protects.',
      (c) => String(c.peakPoolInUse),
    ),
    row(
      'peak retry ratio, error burst',
      `Highest (retries + hedges) / originals at the supplier over a ${o.alertWindowMs / 1000} s window during the burst.`,
      (c) => ratio(c.peakRetryRatio),
    ),
    row(
      `retry-ratio alert (≥ ${o.retryRatioAlert}) after 503s began`,
      'When the retry ratio first crossed its alert threshold, counted from the start of the 503 ramp.',
      (c) => at(c.retryRatioAlertAfterMs),
    ),
    row(
      `error-rate alert (≥ ${pct(o.errorRateAlert)}) after 503s began`,
      'When the checkout error rate seen by users first crossed its alert threshold, from the start of the 503 ramp.',
      (c) => at(c.errorRateAlertAfterMs),
    ),
    row(
      'retry-ratio alert lead over the error-rate alert',
      'How much earlier the retry ratio warned than the error rate: retries hide errors from users while they multiply the load.',
      (c) => (c.retryAlertLeadMs === null ? '–' : `${(c.retryAlertLeadMs / 1000).toFixed(1)} s`),
    ),
    hedging(
      'tail /checkout p99 hedged / unhedged',
      'During the slow-instance phase checkouts alternate between a hedged and an unhedged call; user-facing p99 of each half. Naive never hedges: —.',
      (c) => `${ms(c.tail.hedgedP99Ms)} / ${ms(c.tail.unhedgedP99Ms)}`,
    ),
    hedging(
      'tail supplier-call p99 hedged / unhedged (edge)',
      'The same comparison at the edge (inventory’s whole supplier call for the stock read, the order write after it left out), free of the chain’s own jitter. Naive never hedges: —.',
      (c) => `${ms(c.tail.edgeHedgedP99Ms)} / ${ms(c.tail.edgeUnhedgedP99Ms)}`,
    ),
    hedging(
      'hedges / all extra attempts of hedged requests, tail',
      'What hedging costs: hedges over originals of the hedged half in the tail phase, and all its extra attempts (hedges + retries). Naive never hedges: —.',
      (c) => `${pct(c.tail.hedgeShare)} / ${pct(c.tail.hedgedExtraAttemptShare)}`,
    ),
    row(
      'per-attempt timeout at the edge',
      'The read timeout in force at the end of the run: naive’s fixed setting, prazo’s calibrated healthy p99 × 1.4.',
      (c) => ms(c.edgeTimeoutMs),
    ),
    row(
      'order writes: created / duplicate side effects / succeeded',
      `The checkout’s order write (POST /orders to the supplier after a successful stock read), over the timeline: orders the supplier instances created, those created more than once for one checkout (counted across the instances), and the writes the edge got a 2xx for. Naive retries the POST blindly, with no key: an answer lost after the write (a read timeout, the reset of the supplier’s restart) makes the retry create the order again. prazo sends one idempotency key per write on every attempt and hedge, and the supplier’s idempotency layer, on one store for the fleet, runs it once. A peer’s edge only reads: —.`,
      (c) => {
        const w = c.orderWrites;
        return w ? `${w.created} / ${w.duplicates} / ${w.succeeded}` : NOT_APPLICABLE;
      },
    ),
    row(
      'orders the user did not see confirmed',
      'Orders created for a checkout whose user did not get its 200 within the deadline: the user was told it failed, or gave up, and the order exists. Naive’s writes that succeed after the user has gone are here; so are prazo’s that the deadline cut after the supplier had created the order. A peer’s edge only reads: —.',
      (c) => {
        const w = c.orderWrites;
        return w?.unconfirmed === undefined ? NOT_APPLICABLE : String(w.unconfirmed);
      },
    ),
    ...capacityRows(report, columns),
  ];
}

/** The report as a plain-text table, with the acceptance checks (and the peers' comparison) under it. */
export function formatReportTable(report: DrillReport): string {
  const columns = reportColumns(report);
  const rows: string[][] = [
    ['', ...columns],
    ...reportRows(report).map((r) => r.slice(0, columns.length + 1)),
  ];
  const out = [...textTable(rows), ''];
  if (report.overload != null && report.overload.length > 0)
    out.push(formatOverloadTable(report.overload), '');
  for (const check of report.checks)
    out.push(`${check.pass ? 'PASS' : 'FAIL'}  ${check.name} — ${check.detail}`);
  if ((report.tradeOffs ?? []).length > 0) {
    out.push('', 'Where another column gets more checkouts through than prazo, at more supplier load:');
    for (const sentence of report.tradeOffs ?? []) out.push(`  ${sentence}`);
  }
  if ((report.peerComparison ?? []).length > 0) {
    out.push('', 'Where a peer matches or beats prazo:');
    for (const sentence of report.peerComparison) out.push(`  ${sentence}`);
  }
  for (const skip of report.skipped ?? []) out.push('', `SKIPPED  ${skip.config}: ${skip.reason}`);
  const waterfalls = formatWaterfallsText(report.waterfalls?.run);
  if (waterfalls.length > 0) out.push('', ...waterfalls);
  return `${out.join('\n')}\n`;
}
