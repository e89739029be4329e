import { RETRY_BUDGET_DEFAULTS } from 'prazo/policy';
import type { OverloadFigures } from '../../overload/overload-run.js';
import { budgetWindowMs } from '../calibrate-hop.js';
import type { NormalizedDrillOptions } from '../drill-options.js';
import { comparePeers } from '../peers/comparison.js';
import { burstRampStartMs, FLEET_ROLES, type Phase, type PhaseName } from '../phase-plan.js';
import type { OrderWriteFigures } from '../services/order-writes.js';
import type { DrillConfig, PerConfig, TierMeasurement, TierPolicy } from '../services/spec.js';
import type { DeadlineWaterfall } from '../waterfall/waterfall.js';
import {
  type CapacityFigures,
  capacityChecks,
  capacityFigures,
  type LoopDelay,
  tradeOffs,
} from './capacity-figures.js';
import type { DrillRecorder, Mark, Sample } from './recorder.js';

/** Success and latency of one route over some requests (latencies in ms, rates in [0, 1]). */
export interface RouteFigures {
  sent: number;
  successRate: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /**
   * The failed requests by why they failed (`'504 DEADLINE_INSUFFICIENT'`, `'gave up'` …), most
   * frequent first; absent from reports made before it existed.
   */
  failures?: Record<string, number>;
}

/** Everything measured for one configuration. */
export interface ConfigFigures {
  /** `/catalog` (never calls the supplier) success among requests sent during the degradation. */
  independentSuccessDuringDegradation: number | null;
  /** `/checkout` over the whole run, as the user saw it (failures count at the time the user gave up). */
  checkout: RouteFigures;
  catalog: RouteFigures;
  byPhase: Record<PhaseName, { checkout: RouteFigures; catalog: RouteFigures }>;
  /**
   * (originals + retries + hedges) / originals received by the supplier during the error burst
   * (the whole phase: the supplier's return, the 503 ramp and the plateau). Exact, not rounded.
   */
  burstAmplification: number | null;
  /**
   * The most {@link ConfigFigures.burstAmplification} the retry budget lets through over the burst
   * (see {@link budgetAmplificationBound}); `null` for the naive configuration, which has no budget.
   */
  burstAmplificationBound: number | null;
  /** The same on the burst's plateau only (503 share at its height). */
  burstPlateauAmplification: number | null;
  burstSupplier: { originals: number; retries: number; hedges: number };
  /** Supplier requests that arrived after the user's deadline had passed (whole run): work for nobody. */
  afterDeadline: number;
  /** Supplier requests received over the whole run. */
  supplierReceived: number;
  /** Highest occupancy of the shop's pool (slots). */
  peakPoolInUse: number;
  /** Highest retry ratio at the supplier, from the burst's ramp to its end. */
  peakRetryRatio: number | null;
  /** When each alert condition first held, in ms after the 503 share began to ramp up (null: never). */
  retryRatioAlertAfterMs: number | null;
  errorRateAlertAfterMs: number | null;
  /** How much earlier the retry-ratio alert fired than the error-rate one (ms; positive = earlier). */
  retryAlertLeadMs: number | null;
  /** Tail phase: user-facing checkout p99 with and without hedging, and the extra attempts hedging cost. */
  tail: {
    hedgedP99Ms: number | null;
    unhedgedP99Ms: number | null;
    /** The same comparison at the edge (inventory's whole supplier call), free of the chain's overhead. */
    edgeHedgedP99Ms: number | null;
    edgeUnhedgedP99Ms: number | null;
    /** (retries + hedges) / originals sent by the edge for the hedged requests of the tail phase. */
    hedgedExtraAttemptShare: number | null;
    /** Hedges alone over originals, for the hedged requests of the tail phase: what hedging itself costs. */
    hedgeShare: number | null;
    supplierHedges: number;
  };
  /** Per-attempt timeout at the edge at the end of the run, in ms. */
  edgeTimeoutMs: number | null;
  /** The fleet phase: one supplier instance sick (503), one slow, the others healthy. */
  fleet: FleetFigures;
  /**
   * What the supplier's finite capacity shows: the trigger phase, the event-loop delay of the
   * column's processes, and each phase's success against the supplier load it cost.
   */
  capacity: CapacityFigures;
  /**
   * The checkout's order write over the timeline (naive and prazo; null for a peer, whose edge only
   * reads, and absent in reports made before the write existed): orders created at the supplier
   * instances, those created more than once for one checkout, and the writes that succeeded.
   */
  orderWrites?: OrderWrites | null;
}

/** {@link ConfigFigures.orderWrites}. */
export type OrderWrites = OrderWriteFigures & {
  /** The idempotency store of the column's writes (prazo); null for a column without the layer. */
  store: 'redis' | 'memory per instance' | null;
  /** Repeats the layer answered with the first write's stored response, and repeats that waited for it (since start). */
  replayed: number;
  waited: number;
  /** Store operations that failed (the layer then answers 503: it fails closed). */
  storeErrors: number;
  /** The writes that failed over the timeline, by `<status> <error code>` as the edge saw them. */
  failed: Record<string, number>;
  /**
   * Checkouts whose user got their 200 within the deadline: orders confirmed to the user (absent in
   * reports made before it).
   */
  confirmed?: number;
  /**
   * Orders created for a checkout whose user did not get that 200 (`checkouts − confirmed`): the
   * user was told it failed, or gave up, and the order exists (absent in reports made before it).
   */
  unconfirmed?: number;
  /**
   * The writes the edge sent, those that succeeded and those that failed (by reason), by the phase
   * in which they were sent (`sent`) or ended (the others), from the marks at the phases' starts;
   * absent in reports made before it.
   */
  byPhase?: Partial<Record<PhaseName, PhaseOrderWrites>>;
};

/** The order writes that ended in one phase (see {@link orderWritesByPhase}). */
export interface PhaseOrderWrites {
  sent: number;
  succeeded: number;
  /** Those that failed, by `<status> <error code>`. */
  failed: Record<string, number>;
}

/** The order writes with what the users saw: `confirmed` checkouts, and the orders nobody confirmed. */
export function withConfirmed(writes: OrderWrites, confirmed: number): OrderWrites {
  return { ...writes, confirmed, unconfirmed: Math.max(0, writes.checkouts - confirmed) };
}

/** The order writes that ended in each phase, from the marks at the phases' starts and at the end. */
export function orderWritesByPhase(
  marks: ReadonlyMap<string, Mark>,
  phases: readonly Phase[],
): Partial<Record<PhaseName, PhaseOrderWrites>> {
  const result: Partial<Record<PhaseName, PhaseOrderWrites>> = {};
  phases.forEach((phase, i) => {
    const a = marks.get(phase.name)?.writes;
    const b = marks.get(phases[i + 1]?.name ?? 'end')?.writes;
    if (!a || !b) return;
    const failed: Record<string, number> = {};
    for (const [reason, n] of Object.entries(b.failed ?? {})) {
      const d = n - (a.failed?.[reason] ?? 0);
      if (d > 0) failed[reason] = d;
    }
    result[phase.name] = { sent: b.sent - a.sent, succeeded: b.succeeded - a.succeeded, failed };
  });
  return result;
}

/**
 * What the supplier instances received during the fleet phase, counted on the instances themselves
 * (an HAProxy sidecar's health checks left out). The phase's `/checkout` success is in `byPhase.fleet`.
 */
export interface FleetFigures {
  /** Requests each instance received, by instance index (sick first, then slow, then healthy). */
  instanceRequests: number[];
  /** Each instance's share of them, in [0, 1]; `null` when none was received. */
  instanceShares: Array<number | null>;
  /** The sick instance's share (see {@link FLEET_ROLES}). */
  sickShare: number | null;
  /** The slow instance's share. */
  slowShare: number | null;
  /** Requests the instances received per original sent by the edge (originals + retries + hedges). */
  amplification: number | null;
}

/** One acceptance check of the drill. */
export interface DrillCheck {
  name: string;
  pass: boolean;
  detail: string;
}

/** The drill's report (also its `--json` output). */
export interface DrillReport {
  format: 'prazo-drill-report';
  version: 1;
  startedAt: string;
  /** Length of the traffic, in ms. */
  durationMs: number;
  options: NormalizedDrillOptions;
  phases: Phase[];
  /** What warm-up measured and the policy prazo derived from it, per hop. */
  calibration: Record<string, { measured: TierMeasurement; policy: TierPolicy }>;
  /** The configurations that ran, in display order: naive, prazo, then the peers (`--peers`). */
  columns: DrillConfig[];
  configs: PerConfig<ConfigFigures>;
  /** Peers asked for that could not run, and why (HAProxy not installed). */
  skipped: Array<{ config: DrillConfig; reason: string }>;
  checks: DrillCheck[];
  /** Where a peer matches or beats prazo, row by row, said plainly (empty without peers). */
  peerComparison: string[];
  /**
   * Where another column got more checkouts through than prazo in a phase at more supplier load, one
   * sentence each with the figures (`tradeOffs`); absent in reports written before it was added.
   */
  tradeOffs?: string[];
  /** The dashboard's timeline (samples of each configuration). */
  timeline: { sampleMs: number; samples: PerConfig<Sample[]> };
  /**
   * The overload experiment: 3× a supplier's capacity offered to naive, prazo and prazo with its
   * overload protections (null when left out, `overloadMs: 0`).
   */
  overload: OverloadFigures[] | null;
  /**
   * Where the deadline went for sampled /checkouts (see docs/drill.md, "Where the deadline went"):
   * `run`, per configuration a failing and the slowest successful one of the run; `byPhase`, the
   * same per phase. Absent from reports made before the waterfalls existed.
   */
  waterfalls?: { run: DeadlineWaterfall[]; byPhase: DeadlineWaterfall[] };
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function figures(tally: {
  sent: number;
  ok: number;
  histogram: { count: number; percentile(p: number): number };
  failures?: ReadonlyMap<string, number>;
}): RouteFigures {
  return {
    sent: tally.sent,
    successRate: tally.sent > 0 ? tally.ok / tally.sent : null,
    p50Ms: tally.histogram.count > 0 ? round(tally.histogram.percentile(50)) : null,
    p99Ms: tally.histogram.count > 0 ? round(tally.histogram.percentile(99)) : null,
    failures: Object.fromEntries([...(tally.failures ?? [])].sort((a, b) => b[1] - a[1])),
  };
}

function delta(marks: ReadonlyMap<string, Mark>, from: string, to: string) {
  const a = marks.get(from);
  const b = marks.get(to);
  if (!a || !b) return null;
  return {
    originals: b.supplier.originals - a.supplier.originals,
    retries: b.supplier.retries - a.supplier.retries,
    hedges: b.supplier.hedges - a.supplier.hedges,
    variant(name: string) {
      const x = a.byVariant[name] ?? { original: 0, retry: 0, hedge: 0 };
      const y = b.byVariant[name] ?? { original: 0, retry: 0, hedge: 0 };
      return { original: y.original - x.original, retry: y.retry - x.retry, hedge: y.hedge - x.hedge };
    },
  };
}

/**
 * The fleet phase's figures from the marks at its start (`fleet`) and at the start of the next phase
 * (`next`): what each instance received in between, and its share.
 */
export function fleetFigures(marks: ReadonlyMap<string, Mark>, next: string): FleetFigures {
  const a = marks.get('fleet');
  const b = marks.get(next);
  const instanceRequests = a && b ? b.instanceRequests.map((n, i) => n - (a.instanceRequests[i] ?? 0)) : [];
  const total = instanceRequests.reduce((sum, n) => sum + n, 0);
  const instanceShares = instanceRequests.map((n) => (total > 0 ? n / total : null));
  const d = delta(marks, 'fleet', next);
  return {
    instanceRequests,
    instanceShares,
    sickShare: instanceShares[FLEET_ROLES.sick] ?? null,
    slowShare: instanceShares[FLEET_ROLES.slow] ?? null,
    amplification: amplification(d),
  };
}

function nullableRound(value: number | undefined): number | null {
  return value === undefined ? null : round(value);
}

function amplification(d: { originals: number; retries: number; hedges: number } | null): number | null {
  return d && d.originals > 0 ? (d.originals + d.retries + d.hedges) / d.originals : null;
}

/**
 * The largest amplification (originals + extras) / originals a retry budget lets through over a
 * phase of `phaseMs` that receives `originals`, with the budget saturated from start to end.
 *
 * The budget's window moves in slots of `w = windowMs / bucketCount` and forgets an event up to one
 * slot early: each authorisation guarantees only that the extras of the last `windowMs − w` are at
 * most ⌈maxRatio × originals of the last `windowMs`⌉ (src/policy/retry-budget.ts). Over a sustained
 * burst that is `maxRatio × windowMs / (windowMs − w)` extras per original — 10.1 % with the
 * defaults, not 10 % — plus one extra for the rounding up in each stretch of `windowMs − w`:
 *
 *   bound = 1 + maxRatio × windowMs / (windowMs − w) + ⌈phaseMs / (windowMs − w)⌉ / originals
 *
 * A budget entering the phase with unspent allowance (it is not: the degradation before the burst
 * keeps it spent) could add up to `maxRatio` × the originals of the window before the phase.
 */
export function budgetAmplificationBound(options: {
  maxRatio: number;
  windowMs: number;
  bucketCount: number;
  phaseMs: number;
  originals: number;
}): number | null {
  const { maxRatio, windowMs, bucketCount, phaseMs, originals } = options;
  if (!(originals > 0)) return null;
  const spanMs = windowMs - windowMs / bucketCount;
  return 1 + (maxRatio * windowMs) / spanMs + Math.ceil(phaseMs / spanMs) / originals;
}

/** A factor with three decimals: the figures are compared exactly and shown as they are. */
export const times3 = (value: number | null): string => (value === null ? 'n/a' : `${value.toFixed(3)}×`);

/** First instant (ms after `fromMs`) at which `value` over the trailing window reaches `threshold`. */
function firstCrossing(
  points: ReadonlyArray<{ endMs: number; num: number; den: number }>,
  fromMs: number,
  untilMs: number,
  windowPoints: number,
  threshold: number,
): number | null {
  const inRange = points.filter((p) => p.endMs > fromMs && p.endMs <= untilMs + 1);
  for (let i = 0; i < inRange.length; i++) {
    let num = 0;
    let den = 0;
    for (let j = Math.max(0, i - windowPoints + 1); j <= i; j++) {
      num += inRange[j]!.num;
      den += inRange[j]!.den;
    }
    if (den > 0 && num / den >= threshold) return inRange[i]!.endMs - fromMs;
  }
  return null;
}

/** Computes the report from what the drill recorded. Every figure is measured, none derived from settings. */
export function buildDrillReport(
  recorder: DrillRecorder,
  options: NormalizedDrillOptions,
  calibration: DrillReport['calibration'],
  startedAt: Date,
  edgeTail: Partial<Record<DrillConfig, Record<string, number>>> = {},
  skipped: DrillReport['skipped'] = [],
  overload: OverloadFigures[] | null = null,
  loopDelays: Partial<Record<DrillConfig, LoopDelay[]>> = {},
  orderWrites: Partial<Record<DrillConfig, OrderWrites>> = {},
): DrillReport {
  const capacity = capacityFigures(recorder, options, loopDelays);
  const phases = [...recorder.phases];
  const byName = (name: PhaseName) => phases.find((p) => p.name === name)!;
  const burst = byName('burst');
  // A phase's figures run from its mark to the next phase's (or the end's).
  const after = (name: PhaseName): string =>
    phases[phases.findIndex((p) => p.name === name) + 1]?.name ?? 'end';
  const afterFleet = after('fleet');
  const rampStart = burstRampStartMs(burst);
  const windowPoints = Math.max(1, Math.round(options.alertWindowMs / recorder.sampleMs));
  const configs = {} as PerConfig<ConfigFigures>;
  const timelines = {} as PerConfig<Sample[]>;

  for (const config of recorder.configs) {
    timelines[config] = [...recorder.samples(config)];
    const samples = recorder.samples(config);
    const marks = recorder.marks(config);
    const byPhase = {} as ConfigFigures['byPhase'];
    for (const phase of phases) {
      byPhase[phase.name] = {
        checkout: figures(recorder.tally(config, phase.name, 'checkout')),
        catalog: figures(recorder.tally(config, phase.name, 'catalog')),
      };
    }
    const plateau = delta(marks, 'burst-plateau', after('burst'));
    const wholeBurst = delta(marks, 'burst', after('burst'));
    const tailDelta = delta(marks, 'tail', after('tail'));
    const hedged = tailDelta?.variant('hedged');
    const ratioPoints = samples.map((s) => ({ endMs: s.tMs, num: s.retries + s.hedges, den: s.originals }));
    const errorPoints = recorder
      .checkoutsBySent(config)
      .map((b, i) => ({ endMs: (i + 1) * recorder.sampleMs, num: b.failed, den: b.sent }));
    const retryAt = firstCrossing(ratioPoints, rampStart, burst.endMs, windowPoints, options.retryRatioAlert);
    const errorAt = firstCrossing(errorPoints, rampStart, burst.endMs, windowPoints, options.errorRateAlert);
    let peakRetryRatio: number | null = null;
    const burstPoints = ratioPoints.filter((p) => p.endMs > rampStart && p.endMs <= burst.endMs + 1);
    for (let i = 0; i < burstPoints.length; i++) {
      let num = 0;
      let den = 0;
      for (let j = Math.max(0, i - windowPoints + 1); j <= i; j++) {
        num += burstPoints[j]!.num;
        den += burstPoints[j]!.den;
      }
      if (den > 0) peakRetryRatio = Math.max(peakRetryRatio ?? 0, num / den);
    }
    const last = samples[samples.length - 1];
    const end = marks.get('end');
    configs[config] = {
      independentSuccessDuringDegradation: byPhase.degrade.catalog.successRate,
      checkout: figures(recorder.tally(config, 'all', 'checkout')),
      catalog: figures(recorder.tally(config, 'all', 'catalog')),
      byPhase,
      burstAmplification: amplification(wholeBurst),
      burstAmplificationBound:
        config === 'prazo' && wholeBurst
          ? budgetAmplificationBound({
              maxRatio: RETRY_BUDGET_DEFAULTS.maxRatio,
              windowMs: budgetWindowMs(options),
              bucketCount: RETRY_BUDGET_DEFAULTS.bucketCount,
              phaseMs: burst.endMs - burst.startMs,
              originals: wholeBurst.originals,
            })
          : null,
      burstPlateauAmplification: amplification(plateau),
      burstSupplier: wholeBurst
        ? { originals: wholeBurst.originals, retries: wholeBurst.retries, hedges: wholeBurst.hedges }
        : { originals: 0, retries: 0, hedges: 0 },
      afterDeadline: end?.supplier.afterDeadline ?? 0,
      supplierReceived: end?.supplier.received ?? 0,
      peakPoolInUse: samples.reduce((m, s) => Math.max(m, s.poolPeak), 0),
      peakRetryRatio: peakRetryRatio === null ? null : round(peakRetryRatio, 3),
      retryRatioAlertAfterMs: retryAt,
      errorRateAlertAfterMs: errorAt,
      retryAlertLeadMs: retryAt !== null && errorAt !== null ? errorAt - retryAt : null,
      tail: {
        hedgedP99Ms: figures(recorder.tally(config, 'tail', 'checkout:hedged')).p99Ms,
        unhedgedP99Ms: figures(recorder.tally(config, 'tail', 'checkout:unhedged')).p99Ms,
        edgeHedgedP99Ms: nullableRound(edgeTail[config]?.['hedged']),
        edgeUnhedgedP99Ms: nullableRound(edgeTail[config]?.['unhedged']),
        hedgedExtraAttemptShare:
          hedged && hedged.original > 0 ? round((hedged.retry + hedged.hedge) / hedged.original, 4) : null,
        hedgeShare: hedged && hedged.original > 0 ? round(hedged.hedge / hedged.original, 4) : null,
        supplierHedges: tailDelta?.hedges ?? 0,
      },
      edgeTimeoutMs: last?.timeoutMs ?? null,
      fleet: fleetFigures(marks, afterFleet),
      capacity: capacity[config]!,
      orderWrites: orderWrites[config]
        ? withConfirmed(
            { ...orderWrites[config]!, byPhase: orderWritesByPhase(marks, phases) },
            recorder.tally(config, 'all', 'checkout').ok,
          )
        : null,
    };
  }

  return {
    format: 'prazo-drill-report',
    version: 1,
    startedAt: startedAt.toISOString(),
    durationMs: phases[phases.length - 1]!.endMs,
    options,
    phases,
    calibration,
    columns: [...recorder.configs],
    configs,
    skipped,
    ...judge(configs, recorder.configs, phases, overload),
    timeline: { sampleMs: recorder.sampleMs, samples: timelines },
    overload,
  };
}

/**
 * The judgements across the columns of a report: the checks, where a peer matches or beats prazo, and
 * the trade-offs. They compare prazo with naive and the others: a turn of a --peers run without them
 * (two peers alone) leaves them to the merged report (`mergeTurns`), and judges only its overload
 * experiment.
 */
function judge(
  configs: PerConfig<ConfigFigures>,
  columns: readonly DrillConfig[],
  phases: readonly Phase[],
  overload: OverloadFigures[] | null,
): Pick<DrillReport, 'checks' | 'peerComparison' | 'tradeOffs'> {
  if (configs.naive === undefined || configs.prazo === undefined)
    return { checks: overloadChecks(overload), peerComparison: [], tradeOffs: [] };
  return {
    checks: [
      ...acceptanceChecks(configs),
      ...orderWriteChecks(configs),
      ...capacityChecks(configs, columns),
      ...overloadChecks(overload),
    ],
    peerComparison: comparePeers(configs, columns),
    tradeOffs: tradeOffs(configs, columns, Object.fromEntries(phases.map((p) => [p.name, p.label]))),
  };
}

/**
 * One report from the turns of a `--peers` run (each turn a drill of two columns on the same plan):
 * each column's figures, timeline and waterfalls as its turn measured them, the overload experiment
 * of the turn that ran it, and every judgement across columns (checks, the peers' comparison, the
 * trade-offs) made again over all of them.
 */
export function mergeTurns(reports: readonly DrillReport[], skipped: DrillReport['skipped']): DrillReport {
  const first = reports[0]!;
  const columns = reports.flatMap((r) => r.columns);
  const configs = Object.assign({}, ...reports.map((r) => r.configs)) as PerConfig<ConfigFigures>;
  const overload = reports.find((r) => r.overload !== null)?.overload ?? null;
  const merged: DrillReport = {
    ...first,
    calibration: Object.assign({}, ...reports.map((r) => r.calibration)),
    columns,
    configs,
    skipped,
    ...judge(configs, columns, first.phases, overload),
    timeline: {
      sampleMs: first.timeline.sampleMs,
      samples: Object.assign({}, ...reports.map((r) => r.timeline.samples)) as PerConfig<Sample[]>,
    },
    overload,
  };
  if (reports.some((r) => r.waterfalls !== undefined))
    merged.waterfalls = {
      run: reports.flatMap((r) => r.waterfalls?.run ?? []),
      byPhase: reports.flatMap((r) => r.waterfalls?.byPhase ?? []),
    };
  return merged;
}

const pct = (value: number | null) => (value === null ? 'n/a' : `${round(value * 100, 2)} %`);

/**
 * The overload experiment's conditions: with the protections the goodput stays at ≥ 80 % of the
 * supplier's capacity while the naive setup's falls below 20 %, and the requests prazo admitted
 * were answered within the user's deadline. None without the experiment.
 */
export function overloadChecks(overload: OverloadFigures[] | null): DrillCheck[] {
  if (overload === null) return [];
  const of = (config: string) => overload.find((f) => f.config === config);
  const naive = of('naive');
  const shielded = of('prazo-protected');
  const share = (f: OverloadFigures | undefined) =>
    f === undefined
      ? 'n/a'
      : `${Math.round(f.goodputRps)} of ${Math.round(f.capacityRps)} rps (${pct(f.goodputShare)})`;
  return [
    {
      name: 'overload (3× capacity): prazo with its protections keeps goodput ≥ 80 % of capacity',
      pass: shielded !== undefined && shielded.goodputShare >= 0.8,
      detail: `prazo-protected ${share(shielded)}`,
    },
    {
      name: 'overload (3× capacity): naive goodput falls below 20 % of capacity',
      pass: naive !== undefined && naive.goodputShare < 0.2,
      detail: `naive ${share(naive)}`,
    },
    {
      name: 'overload (3× capacity): what prazo admitted was answered within the user’s deadline (at most 1 % after it)',
      // In time by definition; the late ones (answers the user no longer waited for) stay under 1 %.
      pass: shielded !== undefined && shielded.inTime > 0 && shielded.lateSuccesses <= 0.01 * shielded.inTime,
      detail:
        shielded === undefined
          ? 'n/a'
          : `${shielded.inTime} answered in time (p99 ${shielded.admittedP99Ms === null ? 'n/a' : round(shielded.admittedP99Ms)} ms), ${shielded.lateSuccesses} after the deadline (${pct(shielded.inTime > 0 ? shielded.lateSuccesses / shielded.inTime : null)}; the bound is 1 %)`,
    },
  ];
}

/**
 * The order write's condition: prazo's keyed writes create no order twice. Left out when the report
 * has no order writes (a report made before they existed).
 */
export function orderWriteChecks(configs: PerConfig<ConfigFigures>): DrillCheck[] {
  const prazo = configs.prazo.orderWrites;
  if (prazo === undefined || prazo === null) return [];
  const naive = configs.naive.orderWrites ?? null;
  const of = (w: OrderWrites | null) =>
    w === null ? 'n/a' : `${w.duplicates} of ${w.created} orders (${w.succeeded} writes succeeded)`;
  return [
    {
      name: 'prazo: 0 duplicate side effects (orders created twice for one checkout)',
      pass: prazo.duplicates === 0 && prazo.created > 0,
      detail: `prazo ${of(prazo)}, store ${prazo.store ?? 'none'}; naive ${of(naive)}`,
    },
  ];
}

/** The acceptance conditions, checked on the measured figures. */
export function acceptanceChecks(configs: PerConfig<ConfigFigures>): DrillCheck[] {
  const { naive, prazo } = configs;
  const checks: DrillCheck[] = [];
  const add = (name: string, pass: boolean, detail: string) => checks.push({ name, pass, detail });
  const ps = prazo.independentSuccessDuringDegradation;
  const ns = naive.independentSuccessDuringDegradation;
  add(
    'independent route survives the degradation with prazo (≥ 99.9 %)',
    ps !== null && ps >= 0.999,
    `prazo ${pct(ps)}`,
  );
  add(
    'independent route fails with the naive settings (far lower)',
    ns !== null && ps !== null && ns <= 0.8 && ns < ps - 0.15,
    `naive ${pct(ns)}`,
  );
  // The exact figure against the exact bound: a budget saturated by the burst sits just under it by
  // design, so no rounding may turn 1.104 into a pass or 1.101 into a fail.
  const amplified = prazo.burstAmplification;
  const bound = prazo.burstAmplificationBound;
  add(
    'prazo amplification during the error burst ≤ the retry budget’s bound (≈ 1.1×)',
    amplified !== null && bound !== null && amplified <= bound,
    `prazo ${times3(amplified)} (bound ${times3(bound)})`,
  );
  add(
    'naive amplification during the error burst ≈ 3× (≥ 2×)',
    naive.burstAmplification !== null && naive.burstAmplification >= 2,
    `naive ${times3(naive.burstAmplification)}`,
  );
  add(
    'no prazo supplier request after the user’s deadline',
    prazo.afterDeadline === 0,
    `prazo ${prazo.afterDeadline}`,
  );
  // Hedging is judged where it happens, on the edge's supplier call: the user-facing p99 adds the
  // chain's own jitter, which on a busy machine is as large as the effect (both are reported).
  const { edgeHedgedP99Ms: h, edgeUnhedgedP99Ms: u, hedgeShare, hedgedExtraAttemptShare: extra } = prazo.tail;
  add(
    'hedged tail p99 well below unhedged at the edge (≤ 0.75×)',
    h !== null && u !== null && h <= 0.75 * u,
    `hedged ${h ?? 'n/a'} ms vs unhedged ${u ?? 'n/a'} ms`,
  );
  // The fleet phase: one sick instance must not make the dependency sick. The sick instance's share
  // is the balancer's own figure (≤ 15 %, as with two instances in the client's tests); the success
  // is the user's, here with a slow instance beside the sick one.
  const pf = prazo.byPhase.fleet?.checkout.successRate ?? null;
  const nf = naive.byPhase.fleet?.checkout.successRate ?? null;
  add(
    'one instance sick, one slow: prazo’s /checkout success ≥ 99 % and ≥ naive’s',
    pf !== null && nf !== null && pf >= 0.99 && pf >= nf,
    `prazo ${pct(pf)}, naive ${pct(nf)}`,
  );
  add(
    'one instance sick: prazo sends it ≤ 15 % of the supplier requests, less than naive',
    prazo.fleet.sickShare !== null &&
      naive.fleet.sickShare !== null &&
      prazo.fleet.sickShare <= 0.15 &&
      prazo.fleet.sickShare < naive.fleet.sickShare,
    `prazo ${pct(prazo.fleet.sickShare)}, naive ${pct(naive.fleet.sickShare)}`,
  );
  add(
    'hedging costs ≤ 10 % extra attempts',
    hedgeShare !== null && hedgeShare <= 0.1,
    `hedges ${pct(hedgeShare)} of originals (all extra attempts ${pct(extra)})`,
  );
  return checks;
}
