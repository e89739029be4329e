import type { NormalizedDrillOptions } from '../drill-options.js';
import { type Phase, type PhaseName, triggerWindow } from '../phase-plan.js';
import type { DrillConfig, PerConfig } from '../services/spec.js';
import type { DrillRecorder } from './recorder.js';

/** How late one process's event loop ran over the measured traffic (`monitorEventLoopDelay`). */
export interface LoopDelay {
  /** The process, e.g. `prazo/inventory`. */
  process: string;
  p99Ms: number;
  maxMs: number;
}

/**
 * A column's event-loop delay: the worst p99 among its processes (users, shop, orders, inventory and
 * the supplier instances). Beyond {@link LOOP_DELAY_BOUND_MS} its timers fired late enough to move the
 * figures it measures, and the column is flagged.
 */
export interface ColumnLoopDelay {
  worst: LoopDelay;
  /** Highest single delay among its processes, ms. */
  maxMs: number;
  /** Whether {@link ColumnLoopDelay.worst}'s p99 is beyond {@link LOOP_DELAY_BOUND_MS}. */
  stalled: boolean;
}

/**
 * The event-loop delay p99 beyond which a column is flagged: 50 ms is a quarter of the healthy
 * supplier's p99 and a tenth of prazo's calibrated attempt timeout — a process that late measures the
 * machine, not its client.
 */
export const LOOP_DELAY_BOUND_MS = 50;

/** The trigger phase of one column: the capacity drop and what followed it. */
export interface TriggerFigures {
  /** Checkouts sent during the capacity drop that got a 200 within the user's deadline. */
  successDuringDrop: number | null;
  /**
   * From the drop's end until checkout success stays ≥ {@link RECOVERED_SUCCESS} for
   * {@link RECOVERED_FOR_MS} (by the instant the checkouts were sent), in ms; `null`: not within the
   * phase ("never").
   */
  recoverMs: number | null;
  /** Most requests waiting for a supplier worker during the phase (the instances' peaks summed). */
  peakQueue: number;
}

/** Success a column must hold, from some instant on, to count as recovered. */
export const RECOVERED_SUCCESS = 0.95;
/** How long it must hold it, ms. */
export const RECOVERED_FOR_MS = 2_000;

/** Success against the load it cost, for one phase of one column. */
export interface PhaseTradeOff {
  /** /checkout success of the checkouts sent in the phase. */
  success: number | null;
  /** Requests the supplier received per checkout sent in the phase (originals, retries and hedges). */
  load: number | null;
  /**
   * The checkouts `success` counts (absent in reports written before it was recorded): how much
   * of a difference in success is noise ({@link dominates}).
   */
  checkouts?: number;
  /** The columns that beat this one on both: more success and less load (see {@link dominators}). */
  dominatedBy: DrillConfig[];
}

/** What the finite-capacity supplier lets the report say of one column. */
export interface CapacityFigures {
  trigger: TriggerFigures;
  /** null when the processes were not read (an older report, an interrupted run). */
  loopDelay: ColumnLoopDelay | null;
  byPhase: Record<PhaseName, PhaseTradeOff>;
}

/**
 * The margins within which two columns count as equal when one is said to dominate another: 0.1 point
 * of success (the table's noise on the catalog row) and 0.01 request per checkout. The success margin
 * is wider when the phase's checkouts are few: see {@link successNoise}.
 */
export const DOMINANCE_MARGIN = Object.freeze({ success: 0.001, load: 0.01 });

/**
 * Standard errors by which one column's success must exceed another's to count as more: with 2 a
 * difference this large comes from chance (two columns that would succeed equally often, each phase
 * a sample of their checkouts) about once in 40 comparisons.
 */
export const SUCCESS_STANDARD_ERRORS = 2;

/**
 * How far apart the success of `a` and `b` may be by chance alone: {@link SUCCESS_STANDARD_ERRORS}
 * standard errors of the difference of two proportions, √(p₁(1−p₁)/n₁ + p₂(1−p₂)/n₂). 0 when either
 * count is unknown. A phase of 5 s holds about 170 counted checkouts: 99.4 % against 100 % there is
 * one checkout, within the noise; 90 % against 100 % is not.
 */
export function successNoise(a: PhaseTradeOff, b: PhaseTradeOff): number {
  if (a.success === null || b.success === null || !a.checkouts || !b.checkouts) return 0;
  const variance = (a.success * (1 - a.success)) / a.checkouts + (b.success * (1 - b.success)) / b.checkouts;
  return SUCCESS_STANDARD_ERRORS * Math.sqrt(variance);
}

/**
 * Whether `a` got more checkouts through than `b`, beyond {@link DOMINANCE_MARGIN} and beyond the
 * noise ({@link successNoise}); false when either has no figure.
 */
function moreSuccess(a: PhaseTradeOff, b: PhaseTradeOff): boolean {
  if (a.success === null || b.success === null) return false;
  return a.success > b.success + Math.max(DOMINANCE_MARGIN.success, successNoise(a, b));
}

/**
 * Whether `a` has both more success ({@link moreSuccess}) and less load than `b`, the load beyond
 * {@link DOMINANCE_MARGIN}.
 */
export function dominates(a: PhaseTradeOff, b: PhaseTradeOff): boolean {
  if (a.load === null || b.load === null) return false;
  return moreSuccess(a, b) && a.load < b.load - DOMINANCE_MARGIN.load;
}

/**
 * The first instant at or after `fromMs` from which every slice of `sliceMs` over `forMs` has success
 * ≥ `threshold` (a slice without a checkout counts as holding), as ms after `fromMs`; null when no
 * such instant leaves the whole `forMs` before `untilMs`.
 */
export function recoveryMs(
  buckets: ReadonlyArray<{ sent: number; failed: number }>,
  sliceMs: number,
  fromMs: number,
  untilMs: number,
  threshold = RECOVERED_SUCCESS,
  forMs = RECOVERED_FOR_MS,
): number | null {
  const span = Math.max(1, Math.round(forMs / sliceMs));
  const holds = (i: number) => {
    const b = buckets[i];
    return b === undefined || b.sent === 0 || (b.sent - b.failed) / b.sent >= threshold;
  };
  for (let i = Math.ceil(fromMs / sliceMs); (i + span) * sliceMs <= untilMs; i++) {
    let all = true;
    for (let j = i; j < i + span && all; j++) all = holds(j);
    if (all) return i * sliceMs - fromMs;
  }
  return null;
}

function successBetween(
  buckets: ReadonlyArray<{ sent: number; failed: number }>,
  sliceMs: number,
  fromMs: number,
  toMs: number,
): number | null {
  let sent = 0;
  let failed = 0;
  for (let i = Math.floor(fromMs / sliceMs); i * sliceMs < toMs; i++) {
    sent += buckets[i]?.sent ?? 0;
    failed += buckets[i]?.failed ?? 0;
  }
  return sent > 0 ? (sent - failed) / sent : null;
}

/** Computes {@link CapacityFigures} of every column from what the drill recorded. */
export function capacityFigures(
  recorder: DrillRecorder,
  options: NormalizedDrillOptions,
  loopDelays: Partial<Record<DrillConfig, LoopDelay[]>> = {},
): PerConfig<CapacityFigures> {
  const phases = [...recorder.phases];
  const trigger = phases.find((p) => p.name === 'trigger');
  const result = {} as PerConfig<CapacityFigures>;
  for (const config of recorder.configs) {
    const buckets = recorder.checkoutsBySent(config);
    const samples = recorder.samples(config);
    const marks = recorder.marks(config);
    const byPhase = {} as Record<PhaseName, PhaseTradeOff>;
    phases.forEach((phase: Phase, i) => {
      const a = marks.get(phase.name);
      const b = marks.get(phases[i + 1]?.name ?? 'end');
      const tally = recorder.tally(config, phase.name, 'checkout');
      // The supplier's requests over every checkout sent in the phase (those counted in the whole
      // run only included: they were sent, and loaded the supplier, in it).
      const sent = recorder.checkoutsSent(config, phase.name);
      const requests =
        a && b
          ? b.supplier.originals +
            b.supplier.retries +
            b.supplier.hedges -
            (a.supplier.originals + a.supplier.retries + a.supplier.hedges)
          : null;
      byPhase[phase.name] = {
        success: tally.sent > 0 ? tally.ok / tally.sent : null,
        load: requests !== null && sent > 0 ? requests / sent : null,
        checkouts: tally.sent,
        dominatedBy: [],
      };
    });
    let triggerFigures: TriggerFigures = { successDuringDrop: null, recoverMs: null, peakQueue: 0 };
    if (trigger) {
      const drop = triggerWindow(trigger, options);
      triggerFigures = {
        successDuringDrop: successBetween(buckets, recorder.sampleMs, drop.startMs, drop.endMs),
        recoverMs: recoveryMs(buckets, recorder.sampleMs, drop.endMs, trigger.endMs),
        peakQueue: samples
          .filter((s) => s.tMs > trigger.startMs && s.tMs <= trigger.endMs)
          .reduce((m, s) => Math.max(m, s.supplierQueuePeak ?? 0), 0),
      };
    }
    const delays = loopDelays[config];
    let loopDelay: ColumnLoopDelay | null = null;
    if (delays && delays.length > 0) {
      const worst = delays.reduce((w, d) => (d.p99Ms > w.p99Ms ? d : w));
      loopDelay = {
        worst,
        maxMs: Math.max(...delays.map((d) => d.maxMs)),
        stalled: worst.p99Ms > LOOP_DELAY_BOUND_MS,
      };
    }
    result[config] = { trigger: triggerFigures, loopDelay, byPhase };
  }
  for (const phase of phases) {
    for (const config of recorder.configs) {
      const mine = result[config]!.byPhase[phase.name];
      mine.dominatedBy = recorder.configs.filter(
        (other) => other !== config && dominates(result[other]!.byPhase[phase.name], mine),
      );
    }
  }
  return result;
}

/** The recovery the trigger phase asks of prazo: back within 1 s of the capacity drop's end. */
export const PRAZO_RECOVERY_MS = 1_000;

const pct = (value: number | null) => (value === null ? 'n/a' : `${Math.round(value * 10_000) / 100} %`);
const seconds = (value: number | null) => (value === null ? 'never' : `${(value / 1000).toFixed(1)} s`);

/**
 * Where another column got more of its checkouts through than prazo in a phase, beyond the noise
 * ({@link successNoise}), at more supplier load: one sentence each, with the figures — a trade-off,
 * not a loss on both counts (that is {@link dominates}). The error burst's says that it is the
 * article's: a budget that keeps the retries of a burst of errors to about a tenth of the calls.
 * `labels` names the phases.
 */
export function tradeOffs(
  configs: PerConfig<{ capacity: CapacityFigures }>,
  columns: readonly DrillConfig[],
  labels: Readonly<Record<string, string>>,
): string[] {
  const prazo = configs.prazo;
  if (!prazo) return [];
  const sentences: string[] = [];
  for (const [phase, mine] of Object.entries(prazo.capacity.byPhase)) {
    for (const other of columns) {
      const theirs = configs[other]?.capacity.byPhase[phase as PhaseName];
      if (other === 'prazo' || !theirs) continue;
      if (mine.success === null || theirs.success === null || mine.load === null || theirs.load === null)
        continue;
      if (!moreSuccess(theirs, mine) || !(theirs.load > mine.load + DOMINANCE_MARGIN.load)) continue;
      const points = ((theirs.success - mine.success) * 100).toFixed(1);
      const ratio = mine.load > 0 ? `${(theirs.load / mine.load).toFixed(2)}× prazo’s` : 'more';
      const why =
        phase === 'burst'
          ? 'the article’s deliberate trade-off: prazo’s retry budget holds the extra attempts of a burst of errors to about a tenth of its calls, so that retries cannot take a supplier past its capacity'
          : 'a trade-off of success against load, not a loss on both counts';
      sentences.push(
        `${labels[phase] ?? phase}: ${other} got ${points} points more of its checkouts through (${pct(theirs.success)} against prazo’s ${pct(mine.success)}) for ${ratio} supplier load (${theirs.load.toFixed(2)} against ${mine.load.toFixed(2)} requests per checkout) — ${why}.`,
      );
    }
  }
  return sentences;
}

/**
 * The checks the finite-capacity supplier adds: prazo's whole-run success at least naive's, prazo not
 * dominated in any phase, prazo's recovery from the trigger, naive's storm, and no column stalled.
 */
export function capacityChecks(
  configs: PerConfig<{ checkout: { successRate: number | null }; capacity: CapacityFigures }>,
  columns: readonly DrillConfig[],
): Array<{ name: string; pass: boolean; detail: string }> {
  const { naive, prazo } = configs;
  const checks: Array<{ name: string; pass: boolean; detail: string }> = [];
  const ps = prazo.checkout.successRate;
  const ns = naive.checkout.successRate;
  checks.push({
    name: 'whole run: prazo’s /checkout success ≥ naive’s',
    pass: ps !== null && ns !== null && ps >= ns,
    detail: `prazo ${pct(ps)}, naive ${pct(ns)}`,
  });
  const dominated = Object.entries(prazo.capacity.byPhase).filter(([, f]) => f.dominatedBy.length > 0);
  checks.push({
    name: 'prazo is dominated in no phase (no column with both more success and less supplier load)',
    pass: dominated.length === 0,
    detail:
      dominated.length === 0
        ? 'none'
        : dominated.map(([phase, f]) => `${phase} by ${f.dominatedBy.join(', ')}`).join('; '),
  });
  const pr = prazo.capacity.trigger.recoverMs;
  checks.push({
    name: `trigger: prazo recovers within ${PRAZO_RECOVERY_MS / 1000} s of the capacity drop’s end`,
    pass: pr !== null && pr <= PRAZO_RECOVERY_MS,
    detail: `prazo ${seconds(pr)}, naive ${seconds(naive.capacity.trigger.recoverMs)}`,
  });
  const stalled = columns.filter((c) => configs[c]?.capacity.loopDelay?.stalled === true);
  const worst = columns
    .map((c) => configs[c]?.capacity.loopDelay)
    .filter((d): d is ColumnLoopDelay => d != null)
    .reduce<ColumnLoopDelay | null>((w, d) => (w === null || d.worst.p99Ms > w.worst.p99Ms ? d : w), null);
  checks.push({
    name: `no column’s processes stalled (event-loop delay p99 ≤ ${LOOP_DELAY_BOUND_MS} ms)`,
    pass: worst !== null && stalled.length === 0,
    detail:
      worst === null
        ? 'not measured'
        : `${stalled.length === 0 ? 'worst' : `stalled: ${stalled.join(', ')}; worst`} ${worst.worst.process} ${Math.round(worst.worst.p99Ms)} ms`,
  });
  return checks;
}
