import { CancelledError } from 'prazo';
import { type OverloadConfig, runOverload } from '../overload/overload-run.js';
import { calibrateHop } from './calibrate-hop.js';
import { type DrillOptions, type NormalizedDrillOptions, normalizeDrillOptions } from './drill-options.js';
import { findHaproxy, HAPROXY_INSTALL_HINT } from './peers/haproxy-sidecar.js';
import { PEER_CONFIGS } from './peers/settings.js';
import {
  burstPlateauStartMs,
  calibrationAtMs,
  type Phase,
  type PhaseName,
  phaseAt,
  planPhases,
  supplierBehaviour,
} from './phase-plan.js';
import type { LoopDelay } from './report/capacity-figures.js';
import { buildDrillReport, type DrillReport, mergeTurns, type OrderWrites } from './report/drill-report.js';
import {
  type ConfigReading,
  createDrillRecorder,
  type DrillRecorder,
  instanceRequests,
} from './report/recorder.js';
import { orderWriteFigures } from './services/order-writes.js';
import { type ServiceProcess, startServiceProcess } from './services/process.js';
import { findRedisServer, startDrillRedis } from './services/redis.js';
import { type ServiceSet, type Stoppable, startServiceSet } from './services/set.js';
import {
  DRILL_CONFIGS,
  type DrillConfig,
  type PerConfig,
  type TierMeasurement,
  type TierPolicy,
  type TierStats,
} from './services/spec.js';
import { type SupplierCounts, type SupplierOrders, sumSuppliers } from './services/supplier.js';
import { collectWaterfalls, runOf, type WaterfallLog } from './waterfall/collect.js';

/** Where the drill is, for a progress display. */
export interface DrillProgress {
  phase: PhaseName;
  label: string;
  /** ms since the traffic started. */
  elapsedMs: number;
  totalMs: number;
  /** ms left in the current phase. */
  phaseLeftMs: number;
}

/** Hooks of {@link runDrill}. */
export interface DrillHooks {
  /** Called about every second while traffic runs. */
  onProgress?: (progress: DrillProgress) => void;
  /** Called once the services are up and the recorder exists (the dashboard attaches here). */
  onReady?: (context: DrillContext) => void | Promise<void>;
  /** Aborting it stops the drill, kills every service and rejects with `CANCELLED`. */
  signal?: AbortSignal;
  /** Called as each configuration of the overload experiment starts (after the phases). */
  onOverload?: (config: OverloadConfig) => void;
}

/** What the dashboard reads while the drill runs. */
export interface DrillContext {
  options: NormalizedDrillOptions;
  /** The configurations running, in display order. */
  configs: readonly DrillConfig[];
  phases: readonly Phase[];
  recorder: DrillRecorder;
  /** ms since the traffic started (0 before it starts). */
  elapsedMs(): number;
  /** Process ids of every service, for leak checks. */
  pids(): number[];
  /** The calibration so far (empty until prazo is calibrated, 80 % into the warm-up). */
  calibration: DrillReport['calibration'];
  /** The Prometheus metrics the services' clients publish (prazo's own `prazo_*` metrics), text format. */
  serviceMetrics(): Promise<string>;
  /**
   * The deadline waterfalls sampled so far (the gateways' samples are gathered as each phase ends):
   * per configuration, a failing and the slowest successful /checkout of the run up to now.
   */
  waterfalls?: () => NonNullable<DrillReport['waterfalls']>['run'];
}

const SAMPLE_MS = 500;
/** Lead time given to the load drivers so that both start sending at the same instant. */
const START_DELAY_MS = 300;
const SCHEDULER_MS = 100;

/**
 * Runs the drill: starts the naive and the prazo service sets, drives the same open-loop traffic at
 * both through the phases (warm-up → slow tail → trigger → one instance sick, one slow → degradation
 * → error burst → recovery), calibrates prazo from the first 80 % of the warm-up (`CALIBRATE_AT`), and returns the measured report. Leaves no process behind,
 * also when `hooks.signal` aborts.
 *
 * @throws CancelledError when `hooks.signal` aborts; InvalidOptionError for a bad option.
 */
export async function runDrill(input: DrillOptions = {}, hooks: DrillHooks = {}): Promise<DrillReport> {
  const options = normalizeDrillOptions(input);
  const { configs, skipped, haproxy } = drillConfigs(options);
  if (!options.peers) return runColumns(options, hooks, { configs, skipped, haproxy, withOverload: true });
  // Six copies of the system at once are more than a 2-core machine holds (docs/drill.md): the
  // columns run two at a time, one turn after another, on the same seeded plan; the overload
  // experiment runs once, with the first turn.
  const reports: DrillReport[] = [];
  for (const [i, turn] of columnTurns(configs).entries()) {
    reports.push(
      await runColumns(options, hooks, { configs: turn, skipped: [], haproxy, withOverload: i === 0 }),
    );
  }
  return mergeTurns(reports, skipped);
}

/** The columns of a `--peers` run in turns of two, in their order: naive and prazo first. */
export function columnTurns(configs: readonly DrillConfig[]): DrillConfig[][] {
  const turns: DrillConfig[][] = [];
  for (let i = 0; i < configs.length; i += 2) turns.push(configs.slice(i, i + 2));
  return turns;
}

/** What one run of {@link runColumns} drives: the whole drill, or one turn of a `--peers` run. */
interface ColumnRun {
  /** The columns, side by side on the same arrivals. */
  configs: DrillConfig[];
  /** Peers left out (not installed), listed in the report. */
  skipped: DrillReport['skipped'];
  /** The HAProxy binary, when its column runs. */
  haproxy: string | null;
  /** Also run the overload experiment after the phases. */
  withOverload: boolean;
}

/** One drill of `run.configs` side by side: every phase, then (`withOverload`) the overload experiment. */
async function runColumns(
  options: NormalizedDrillOptions,
  hooks: DrillHooks,
  run: ColumnRun,
): Promise<DrillReport> {
  const { configs, skipped, haproxy, withOverload } = run;
  const phases = planPhases(options.phases);
  const totalMs = phases[phases.length - 1]!.endMs;
  const recorder = createDrillRecorder(
    phases,
    SAMPLE_MS,
    options.alertWindowMs,
    configs,
    options.userDeadlineMs,
  );
  const processes: Stoppable[] = [];
  const calibration: DrillReport['calibration'] = {};
  const edgeTail: Partial<Record<DrillConfig, Record<string, number>>> = {};
  const waterfalls: WaterfallLog = { byPhase: [], seed: options.seed };
  const phaseNameAt = (tMs: number) => phaseAt(phases, Math.max(0, tMs)).name;
  const startedAt = new Date();
  let trafficStart = 0;
  let cancelled = false;
  const cleanups: Array<() => void> = [];

  const killAll = () => {
    for (const p of processes) p.kill();
  };
  const onAbort = () => {
    cancelled = true;
    killAll();
    for (const cleanup of cleanups) cleanup();
  };
  if (hooks.signal?.aborted) throw new CancelledError('The drill was interrupted before it started.');
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  const check = () => {
    if (cancelled) throw new CancelledError('The drill was interrupted.');
  };

  try {
    // One Redis for the drill: the prazo column's supplier instances share it as their idempotency
    // store (keys under a prefix of the column's own).
    const redisBinary = findRedisServer();
    const redis = redisBinary === null ? null : await startDrillRedis(redisBinary);
    if (redis) processes.push(redis);
    check();
    const sets = await Promise.all(
      configs.map((config) =>
        startServiceSet(config, options, (p) => processes.push(p), haproxy, redis?.port ?? null),
      ),
    );
    check();
    /** Each column's orders (from its supplier instances) since the previous call. */
    const takeOrders = () =>
      Promise.all(
        sets.map(async (set) => ({
          config: set.config,
          taken: await Promise.all(set.suppliers.map((s) => s.call<SupplierOrders>('take-orders'))),
        })),
      );

    const read = async (): Promise<PerConfig<ConfigReading>> => {
      const entries = await Promise.all(
        sets.map(async (set) => {
          const [gateway, inventory, ...suppliers] = await Promise.all([
            set.gateway.call<TierStats>('stats'),
            set.inventory.call<TierStats>('stats'),
            ...set.suppliers.map((s) => s.call<SupplierCounts>('counts')),
          ]);
          const reading: ConfigReading = {
            gateway,
            inventory,
            suppliers,
            instanceRequests: instanceRequests(suppliers),
          };
          return [set.config, set.sidecar ? throughProxy(reading) : reading] as const;
        }),
      );
      return Object.fromEntries(entries) as PerConfig<ConfigReading>;
    };

    const context: DrillContext = {
      options,
      configs,
      phases,
      recorder,
      elapsedMs: () => (trafficStart === 0 ? 0 : Math.min(totalMs, performance.now() - trafficStart)),
      pids: () => processes.map((p) => p.pid),
      calibration,
      serviceMetrics: async () => {
        const texts = await Promise.all(
          sets.map((set) => set.inventory.call<string>('metrics').catch(() => '')),
        );
        return texts.filter((t) => t !== '').join('\n');
      },
      waterfalls: () => runOf(waterfalls, configs),
    };

    // One load driver per configuration, each in its own process (see LoadSpec).
    const loaders = await Promise.all(
      sets.map(async (set) => {
        const loader = await startServiceProcess(`${set.config}/users`, {
          role: 'load',
          config: set.config,
          url: set.gateway.url,
          rps: options.rps,
          checkoutShare: options.checkoutShare,
          userDeadlineMs: options.userDeadlineMs,
          preMs: options.preWarmMs,
          durationMs: totalMs,
        });
        processes.push(loader);
        return loader;
      }),
    );
    check();
    const loadDone = Promise.all(
      loaders.map(
        (loader) =>
          new Promise<void>((resolve, reject) => {
            loader.onMessage((message) => {
              if (message.type === 'results')
                for (const result of message.results) recorder.recordUser(result);
              else if (message.type === 'load-done') resolve();
            });
            loader.exited.then(() => reject(new CancelledError('A load driver went away.')));
          }),
      ),
    );
    loadDone.catch(() => {});
    await hooks.onReady?.(context);
    check();

    const startAtMs = Date.now() + START_DELAY_MS;
    await Promise.all(loaders.map((loader) => loader.call('start', startAtMs)));
    trafficStart = performance.now() + (startAtMs - Date.now()) + options.preWarmMs;
    // The same traffic runs unmeasured for `preWarmMs` first (cold processes would spoil the warm-up
    // the policy is calibrated from); then the tiers forget it and the timeline starts.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, trafficStart - performance.now())));
    check();
    await Promise.all([
      ...sets.flatMap((set) =>
        [set.gateway, set.orders, set.inventory].map((t) => t.call('reset-measurements')),
      ),
      // Each process's event-loop delay is measured over the timeline alone.
      ...columnProcesses(sets, loaders).map(({ process }) => process.call('loop-delay', 'reset')),
    ]);
    const baseline = await read();
    // The orders of the pre-warm are forgotten: the figures count the timeline's.
    await takeOrders();
    recorder.baseline(baseline);
    recorder.mark('warmup', baseline);

    // Phase transitions and the burst's ramp, applied in order by one chain of async steps.
    let current: Phase = phases[0]!;
    const lastBehaviour = new Map<string, string>();
    let plateauMarked = false;
    let calibrated = false;
    const calibrateAt = calibrationAtMs(phases[0]!);
    let work: Promise<void> = Promise.resolve();
    const enqueue = (step: () => Promise<void>) => {
      work = work.then(step).catch((error: unknown) => {
        if (!cancelled) process.emitWarning(`drill: ${String(error)}`);
      });
    };
    const applyBehaviours = async (phase: Phase, elapsed: number) => {
      const progress = (elapsed - phase.startMs) / (phase.endMs - phase.startMs);
      await Promise.all(
        sets.flatMap((set) =>
          set.suppliers.map(async (supplier, instance) => {
            const behaviour = supplierBehaviour(phase.name, instance, progress, options);
            const key = JSON.stringify(behaviour);
            if (lastBehaviour.get(supplier.name) === key) return;
            lastBehaviour.set(supplier.name, key);
            await supplier.call('set', behaviour);
          }),
        ),
      );
    };
    const enter = async (from: Phase, to: Phase) => {
      // The degraded supplier is restarted, already with the next phase's behaviour: its stuck
      // connections reset, as a restarted dependency's would, and the retries they cause are answered.
      // After the trigger only a configuration whose supplier still queues is: a storm that outlived
      // the trigger ends there, not in the next phase, and a configuration that recovered is not
      // handed a restart (its connections reset, its retry budget spent on them) it did not cause.
      if (from.name === 'degrade' || from.name === 'trigger') {
        await applyBehaviours(to, to.startMs);
        const restarted = from.name === 'degrade' ? sets : await stormedSets(sets, options.supplierWorkers);
        await Promise.all(restarted.flatMap((s) => s.suppliers.map((p) => p.call('restart'))));
      }
      // The edge's own view of hedging: supplier-call p99 by variant over the tail phase alone.
      if (to.name === 'tail' || from.name === 'tail') {
        await Promise.all(
          sets.map(async (set) => {
            const p99 = await set.inventory.call<Record<string, number>>('take-call-p99');
            if (from.name === 'tail') edgeTail[set.config] = p99;
          }),
        );
      }
      recorder.mark(to.name, await read());
      await collectWaterfalls(
        waterfalls,
        sets,
        performance.timeOrigin + trafficStart,
        phaseNameAt,
        options.userDeadlineMs,
      );
    };

    const scheduler = setInterval(() => {
      const elapsed = performance.now() - trafficStart;
      const phase = phaseAt(phases, elapsed);
      if (phase !== current && elapsed < totalMs) {
        const from = current;
        current = phase;
        enqueue(() => enter(from, phase));
      }
      if (!calibrated && elapsed >= calibrateAt) {
        calibrated = true;
        enqueue(() => calibrate(sets, options, calibration));
      }
      if (elapsed < totalMs) enqueue(() => applyBehaviours(phase, elapsed));
      const burst = phases.find((p) => p.name === 'burst')!;
      if (!plateauMarked && elapsed >= burstPlateauStartMs(burst)) {
        plateauMarked = true;
        enqueue(async () => recorder.mark('burst-plateau', await read()));
      }
    }, SCHEDULER_MS);
    let nextSampleAt = SAMPLE_MS;
    let sampling = false;
    const sampler = setInterval(() => {
      const elapsed = performance.now() - trafficStart;
      if (sampling || elapsed < nextSampleAt || elapsed > totalMs + SAMPLE_MS) return;
      sampling = true;
      const tMs = nextSampleAt;
      nextSampleAt += SAMPLE_MS;
      read()
        .then((readings) => recorder.sample(tMs, readings))
        .catch(() => {})
        .finally(() => {
          sampling = false;
        });
      const phase = phaseAt(phases, elapsed);
      if (Math.floor(elapsed / 1000) !== Math.floor((elapsed - SAMPLE_MS) / 1000) || tMs === SAMPLE_MS) {
        hooks.onProgress?.({
          phase: phase.name,
          label: phase.label,
          elapsedMs: Math.min(elapsed, totalMs),
          totalMs,
          phaseLeftMs: Math.max(0, phase.endMs - elapsed),
        });
      }
    }, 50);
    cleanups.push(() => {
      clearInterval(scheduler);
      clearInterval(sampler);
    });

    await loadDone;
    check();
    clearInterval(scheduler);
    clearInterval(sampler);
    await work;
    while (sampling) await new Promise((resolve) => setTimeout(resolve, 20));
    const final = await read();
    const loopDelays = await readLoopDelays(sets, loaders);
    await collectWaterfalls(
      waterfalls,
      sets,
      performance.timeOrigin + trafficStart,
      phaseNameAt,
      options.userDeadlineMs,
    );
    recorder.sample(Math.max(nextSampleAt, totalMs), final);
    recorder.mark('recovery-end', final);
    recorder.mark('end', final);
    const orderWrites = ordersOf(
      await takeOrders(),
      baseline,
      final,
      redis === null ? 'memory per instance' : 'redis',
    );
    check();
    // The overload experiment: its own supplier of known capacity and its own clients, in this
    // process, once the services above are idle.
    const overload =
      !withOverload || options.overloadMs === 0
        ? null
        : await runOverload({
            durationMs: options.overloadMs,
            onProgress: (config, stage) => {
              if (stage === 'start') hooks.onOverload?.(config);
            },
            ...(hooks.signal === undefined ? {} : { signal: hooks.signal }),
          });
    check();
    const report = buildDrillReport(
      recorder,
      options,
      calibration,
      startedAt,
      edgeTail,
      skipped,
      overload,
      loopDelays,
      orderWrites,
    );
    report.waterfalls = { run: runOf(waterfalls, configs), byPhase: waterfalls.byPhase };
    return report;
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    for (const cleanup of cleanups) cleanup();
    await Promise.all(processes.map((p) => p.stop()));
  }
}

/** What each column's order writes did over the timeline (the columns that write: naive and prazo). */
export type ColumnOrderWrites = Omit<OrderWrites, 'byPhase'>;

function ordersOf(
  taken: ReadonlyArray<{ config: DrillConfig; taken: SupplierOrders[] }>,
  baseline: PerConfig<ConfigReading>,
  final: PerConfig<ConfigReading>,
  store: 'redis' | 'memory per instance',
): Partial<Record<DrillConfig, ColumnOrderWrites>> {
  const result: Partial<Record<DrillConfig, ColumnOrderWrites>> = {};
  for (const { config, taken: instances } of taken) {
    const end = final[config]?.inventory.writes;
    if (!end) continue;
    const start = baseline[config]?.inventory.writes ?? { sent: 0, succeeded: 0, failed: {} };
    const figures = orderWriteFigures(
      instances.map((i) => i.orders),
      { sent: end.sent - start.sent, succeeded: end.succeeded - start.succeeded },
    );
    const layers = instances.flatMap((i) => (i.layer ? [i.layer] : []));
    const sum = (key: 'replayed' | 'waited' | 'storeErrors') => layers.reduce((n, l) => n + l[key], 0);
    result[config] = {
      ...figures,
      store: layers.length > 0 ? store : null,
      replayed: sum('replayed'),
      waited: sum('waited'),
      storeErrors: sum('storeErrors'),
      failed: Object.fromEntries(
        Object.entries(end.failed)
          .map(([reason, n]) => [reason, n - (start.failed[reason] ?? 0)] as const)
          .filter(([, n]) => n > 0),
      ),
    };
  }
  return result;
}

/** Every process of each column (its users, its chain and its supplier instances), with its name. */
function columnProcesses(
  sets: readonly ServiceSet[],
  loaders: readonly ServiceProcess[],
): Array<{ config: DrillConfig; process: ServiceProcess }> {
  return sets.flatMap((set, i) =>
    [loaders[i]!, set.gateway, set.orders, set.inventory, ...set.suppliers].map((process) => ({
      config: set.config,
      process,
    })),
  );
}

/**
 * The service sets whose supplier still queues at the end of the trigger ({@link stillQueues}), with
 * the trigger's capacity drop long over: a storm that outlived its cause.
 */
async function stormedSets(sets: readonly ServiceSet[], workers: number): Promise<ServiceSet[]> {
  const queues = await Promise.all(
    sets.map(async (set) => {
      const counts = await Promise.all(set.suppliers.map((s) => s.call<SupplierCounts>('counts')));
      return stillQueues(counts, workers);
    }),
  );
  return sets.filter((_, i) => queues[i]);
}

/**
 * Requests waiting per worker beyond which a supplier instance still queues at the end of the
 * trigger: a storm keeps hundreds waiting, while a healthy instance at 60 % utilisation has more than
 * five rounds of its workers waiting well under 1 % of the time (M/M/c: the chance of n waiting falls
 * as ρⁿ).
 */
export const STORM_QUEUE_ROUNDS = 5;

/** Whether some supplier instance has more requests waiting than {@link STORM_QUEUE_ROUNDS} rounds of its `workers` serve. */
export function stillQueues(counts: readonly Pick<SupplierCounts, 'queued'>[], workers: number): boolean {
  return counts.some((c) => c.queued > STORM_QUEUE_ROUNDS * workers);
}

/** Each column's processes' event-loop delay over the timeline (p99 and max, ms). */
async function readLoopDelays(
  sets: readonly ServiceSet[],
  loaders: readonly ServiceProcess[],
): Promise<Partial<Record<DrillConfig, LoopDelay[]>>> {
  const result: Partial<Record<DrillConfig, LoopDelay[]>> = {};
  await Promise.all(
    columnProcesses(sets, loaders).map(async ({ config, process }) => {
      const figures = await process.call<{ p99Ms: number; maxMs: number }>('loop-delay').catch(() => null);
      if (figures === null) return;
      const list = result[config] ?? [];
      result[config] = list;
      list.push({ process: process.name, ...figures });
    }),
  );
  return result;
}

/**
 * The configurations of a run: naive and prazo, and with `peers` the peers — all but HAProxy when it
 * is not installed, which is then listed in `skipped` with how to install it (never left out silently).
 */
export function drillConfigs(
  options: Pick<NormalizedDrillOptions, 'peers'>,
  haproxyBinary: string | null = options.peers ? findHaproxy() : null,
): { configs: DrillConfig[]; skipped: DrillReport['skipped']; haproxy: string | null } {
  if (!options.peers) return { configs: [...DRILL_CONFIGS], skipped: [], haproxy: null };
  const configs: DrillConfig[] = [...DRILL_CONFIGS];
  const skipped: DrillReport['skipped'] = [];
  for (const peer of PEER_CONFIGS) {
    if (peer === 'haproxy' && haproxyBinary === null)
      skipped.push({ config: peer, reason: HAPROXY_INSTALL_HINT });
    else configs.push(peer);
  }
  return { configs, skipped, haproxy: haproxyBinary };
}

/**
 * The supplier's counters as the drill reports them when an HAProxy sidecar stands in front of it.
 * HAProxy resends a request unchanged, so its retries arrive with the edge's `original` attempt header,
 * and its health checks arrive with none. The originals are what the edge sent (one attempt per call);
 * everything else that reached the instances, checks excluded, is a retry. The per-instance counts
 * (`instanceRequests`, checks already excluded) are kept as they are.
 */
export function throughProxy(reading: ConfigReading): ConfigReading {
  if (reading.suppliers.length === 0) return reading;
  const total = sumSuppliers(reading.suppliers);
  const forwarded = total.received - total.unknownKind;
  const originals = Math.min(forwarded, reading.inventory.attempts.original);
  return {
    ...reading,
    suppliers: [
      {
        ...total,
        received: forwarded,
        originals,
        retries: forwarded - originals,
        hedges: 0,
        unknownKind: 0,
      },
    ],
  };
}

/** Reads what each hop measured during warm-up and hands the prazo hops their calibrated policy. */
async function calibrate(
  sets: readonly ServiceSet[],
  options: NormalizedDrillOptions,
  calibration: DrillReport['calibration'],
): Promise<void> {
  await Promise.all(
    sets.map(async (set) => {
      for (const tier of [set.gateway, set.orders, set.inventory]) {
        const measured = await tier.call<TierMeasurement>('measured');
        const edge = tier === set.inventory;
        const policy: TierPolicy = calibrateHop(measured, options, edge);
        if (set.config === 'prazo') calibration[tier.name.split('/')[1]!] = { measured, policy };
        await tier.call('configure', policy);
      }
    }),
  );
}
