import { LatencyHistogram } from 'prazo/latency';
import { countsInPhase, type Phase, type PhaseName, phaseAt } from '../phase-plan.js';
import type { UserResult } from '../services/load-driver.js';
import type { DrillConfig, PerConfig, TierStats } from '../services/spec.js';
import { type SupplierCounts, sumSuppliers } from '../services/supplier.js';

/** One point of a configuration's timeline: what happened during one sample interval. */
export interface Sample {
  /** End of the interval, ms since the traffic started. */
  tMs: number;
  phase: PhaseName;
  /** User requests that ended in the interval, by route. */
  checkoutOk: number;
  checkoutFailed: number;
  catalogOk: number;
  catalogFailed: number;
  /** Slots in use at the sample, and the peak during the interval. */
  poolInUse: number;
  poolPeak: number;
  poolWaiting: number;
  /** Requests the supplier instances received in the interval, by kind. */
  originals: number;
  retries: number;
  hedges: number;
  /** Supplier requests in the interval that arrived after the user's deadline. */
  afterDeadline: number;
  /**
   * Most requests waiting for a supplier worker during the interval, each instance's peak summed over
   * the instances (the supplier's queue; 0 for a supplier without workers).
   */
  supplierQueuePeak: number;
  /**
   * Requests each supplier instance received in the interval (index = instance), counted by the
   * instance itself; an HAProxy sidecar's health checks are left out.
   */
  instanceRequests: number[];
  /** (retries + hedges) / originals over the alert window, at the supplier; null with no original. */
  retryRatio: number | null;
  /** p99 of the supplier calls over the last seconds, as the edge service measures them (ms). */
  liveP99Ms: number | null;
  /** The per-attempt timeout in force at the edge (ms). */
  timeoutMs: number;
}

/**
 * Counters of a set of user requests, grouped by the phase they were sent in (those whose deadline
 * falls in the next phase count in the whole run only: {@link countsInPhase}).
 */
export interface RouteTally {
  sent: number;
  ok: number;
  histogram: LatencyHistogram;
  /** The failed ones by {@link UserResult.reason}. */
  failures: Map<string, number>;
}

/** Cumulative counters of a configuration at an instant, for differences between two instants. */
export interface Mark {
  supplier: SupplierCounts;
  /** Requests each supplier instance has received (see {@link ConfigReading.instanceRequests}). */
  instanceRequests: number[];
  byVariant: TierStats['byVariant'];
  /** The edge's order writes so far (sent, succeeded), or null for a column that does not write. */
  writes?: TierStats['writes'];
}

/** What the drill reads from a configuration's services at each sample. */
export interface ConfigReading {
  gateway: TierStats;
  inventory: TierStats;
  suppliers: SupplierCounts[];
  /**
   * Requests each supplier instance has received from the configuration's client, cumulative, by
   * instance: `received − unknownKind` (a request without an attempt header is an HAProxy health
   * check). Kept per instance when `suppliers` is summed.
   */
  instanceRequests: number[];
}

/** What each instance of {@link ConfigReading.instanceRequests} counts, from its counters. */
export function instanceRequests(suppliers: readonly SupplierCounts[]): number[] {
  return suppliers.map((s) => s.received - s.unknownKind);
}

type Bucketed = { sent: number; failed: number };

/** Collects everything the report and the dashboard draw. */
export interface DrillRecorder {
  readonly sampleMs: number;
  readonly phases: readonly Phase[];
  /** The configurations recorded, in display order. */
  readonly configs: readonly DrillConfig[];
  recordUser(result: UserResult): void;
  /** Adds one sample per configuration at `tMs`. */
  sample(tMs: number, readings: PerConfig<ConfigReading>): void;
  /** Sets the supplier counters the first sample's differences start from. */
  baseline(readings: PerConfig<ConfigReading>): void;
  /** Remembers the cumulative counters at a named instant (phase boundaries, the burst plateau). */
  mark(name: string, readings: PerConfig<ConfigReading>): void;
  samples(config: DrillConfig): readonly Sample[];
  marks(config: DrillConfig): ReadonlyMap<string, Mark>;
  /**
   * User requests sent in `phase` on `key` (`checkout`, `catalog`, `checkout:hedged`,
   * `checkout:unhedged`), those whose deadline falls in the next phase left out ({@link countsInPhase});
   * every request in `'all'`.
   */
  tally(config: DrillConfig, phase: PhaseName | 'all', key: string): RouteTally;
  /** Every checkout sent in `phase`, those counted in the whole run only included. */
  checkoutsSent(config: DrillConfig, phase: PhaseName): number;
  /** Checkouts by the sample interval they were SENT in (for the error rate, free of leftovers). */
  checkoutsBySent(config: DrillConfig): readonly Bucketed[];
}

/**
 * Creates the drill's recorder for `configs` (naive and prazo, and the peers when they run): a
 * configuration is a column, so another one adds a column and no new code. `userDeadlineMs` is the
 * users' deadline, which decides the phase a request counts in ({@link countsInPhase}).
 */
export function createDrillRecorder(
  phases: readonly Phase[],
  sampleMs: number,
  alertWindowMs: number,
  configs: readonly DrillConfig[] = ['naive', 'prazo'],
  userDeadlineMs = 0,
): DrillRecorder {
  const perConfig = new Map(
    configs.map((config) => [
      config,
      {
        samples: [] as Sample[],
        marks: new Map<string, Mark>(),
        pending: { checkoutOk: 0, checkoutFailed: 0, catalogOk: 0, catalogFailed: 0 },
        last: null as SupplierCounts | null,
        lastInstances: null as number[] | null,
        tallies: new Map<string, RouteTally>(),
        sentByPhase: new Map<string, number>(),
        bySent: [] as Bucketed[],
      },
    ]),
  );
  const windowSamples = Math.max(1, Math.round(alertWindowMs / sampleMs));
  const state = (config: DrillConfig) => perConfig.get(config)!;
  const tallyOf = (config: DrillConfig, phase: string, key: string): RouteTally => {
    const tallies = state(config).tallies;
    const id = `${phase}/${key}`;
    let tally = tallies.get(id);
    if (!tally) {
      tally = { sent: 0, ok: 0, histogram: new LatencyHistogram(), failures: new Map() };
      tallies.set(id, tally);
    }
    return tally;
  };

  const reading = (readings: PerConfig<ConfigReading>, config: DrillConfig): ConfigReading => {
    const found = readings[config];
    if (!found) throw new Error(`No reading for the ${config} configuration.`);
    return found;
  };

  return {
    sampleMs,
    phases,
    configs,
    recordUser(result) {
      const s = state(result.config);
      if (result.route === 'checkout') s.pending[result.ok ? 'checkoutOk' : 'checkoutFailed']++;
      else s.pending[result.ok ? 'catalogOk' : 'catalogFailed']++;
      const phase = phaseAt(phases, result.sentAtMs).name;
      const keys = result.route === 'checkout' ? ['checkout', `checkout:${result.variant}`] : ['catalog'];
      const counted = countsInPhase(phases, result.sentAtMs, userDeadlineMs) ? [phase, 'all'] : ['all'];
      // Every checkout by the phase it was sent in, for the load the phase put on the supplier.
      if (result.route === 'checkout') s.sentByPhase.set(phase, (s.sentByPhase.get(phase) ?? 0) + 1);
      for (const p of counted) {
        for (const key of keys) {
          const tally = tallyOf(result.config, p, key);
          tally.sent++;
          if (result.ok) tally.ok++;
          else tally.failures.set(result.reason, (tally.failures.get(result.reason) ?? 0) + 1);
          tally.histogram.record(result.durationMs);
        }
      }
      if (result.route === 'checkout') {
        const index = Math.floor(result.sentAtMs / sampleMs);
        while (s.bySent.length <= index) s.bySent.push({ sent: 0, failed: 0 });
        s.bySent[index]!.sent++;
        if (!result.ok) s.bySent[index]!.failed++;
      }
    },
    sample(tMs, readings) {
      for (const config of configs) {
        const s = state(config);
        const current = reading(readings, config);
        const supplier = sumSuppliers(current.suppliers);
        const last = s.last ?? { ...supplier, originals: 0, retries: 0, hedges: 0, afterDeadline: 0 };
        s.last = supplier;
        const lastInstances = s.lastInstances ?? current.instanceRequests.map(() => 0);
        s.lastInstances = current.instanceRequests;
        const pool = current.gateway.pool;
        const sample: Sample = {
          tMs,
          phase: phaseAt(phases, Math.max(0, tMs - 1)).name,
          ...s.pending,
          poolInUse: pool?.inUse ?? 0,
          poolPeak: pool?.peakInUse ?? 0,
          poolWaiting: pool?.waiting ?? 0,
          originals: supplier.originals - last.originals,
          retries: supplier.retries - last.retries,
          hedges: supplier.hedges - last.hedges,
          afterDeadline: supplier.afterDeadline - last.afterDeadline,
          supplierQueuePeak: supplier.queuePeak ?? 0,
          instanceRequests: current.instanceRequests.map((n, i) => n - (lastInstances[i] ?? 0)),
          retryRatio: null,
          liveP99Ms: Number.isFinite(current.inventory.liveP99Ms) ? current.inventory.liveP99Ms : null,
          timeoutMs: current.inventory.timeoutMs,
        };
        s.samples.push(sample);
        sample.retryRatio = windowRatio(s.samples.slice(-windowSamples));
        s.pending = { checkoutOk: 0, checkoutFailed: 0, catalogOk: 0, catalogFailed: 0 };
      }
    },
    baseline(readings) {
      for (const config of configs) {
        const current = reading(readings, config);
        state(config).last = sumSuppliers(current.suppliers);
        state(config).lastInstances = current.instanceRequests;
      }
    },
    mark(name, readings) {
      for (const config of configs) {
        const current = reading(readings, config);
        state(config).marks.set(name, {
          supplier: sumSuppliers(current.suppliers),
          instanceRequests: current.instanceRequests,
          byVariant: current.inventory.byVariant,
          writes: current.inventory.writes ?? null,
        });
      }
    },
    samples: (config) => state(config).samples,
    marks: (config) => state(config).marks,
    tally: (config, phase, key) => tallyOf(config, phase, key),
    checkoutsSent: (config, phase) => state(config).sentByPhase.get(phase) ?? 0,
    checkoutsBySent: (config) => state(config).bySent,
  };
}

/** (retries + hedges) / originals over some samples; null with no original. */
export function windowRatio(
  samples: readonly Pick<Sample, 'originals' | 'retries' | 'hedges'>[],
): number | null {
  let originals = 0;
  let extras = 0;
  for (const s of samples) {
    originals += s.originals;
    extras += s.retries + s.hedges;
  }
  return originals > 0 ? extras / originals : null;
}
