import { InvalidOptionError } from 'prazo';
import { createSlicedWindow, LatencyHistogram } from 'prazo/latency';
import { createRetryBudget, type HedgePolicy, hedgeDelayMs } from 'prazo/policy';
import { createSimulation, type Simulation } from '../engine.js';
import { createSimRandom, type SimRandom } from '../random.js';

/** The hedging policies compared by the `tail` scenario. */
export type HedgeStrategyName = 'none' | 'fixed' | 'p95';

/** Every hedging policy, in report order. */
export const HEDGE_STRATEGY_NAMES: readonly HedgeStrategyName[] = Object.freeze(['none', 'fixed', 'p95']);

/** Parameters of the `tail` scenario. Durations in ms. */
export interface TailOptions {
  /** Seed of every random draw. @default 1 */
  seed: number;
  /** Simulated time, ms. @default 600_000 */
  durationMs: number;
  /** Fan-outs started before this are simulated but not counted (the live p95 needs data), ms. @default 10_000 */
  warmupMs: number;
  /** Fan-out requests per second (Poisson). @default 20 */
  fanoutsPerSecond: number;
  /** Sub-requests per fan-out; the fan-out completes with its slowest sub-request. @default 100 */
  fanout: number;
  /** Servers; each sub-request (and each hedge) goes to a random one. @default 100 */
  servers: number;
  /** Mean service time of a sub-request on a server that is not paused, ms (log-normal). @default 4.4 */
  serviceMeanMs: number;
  /** Shape σ of that log-normal. @default 0.45 */
  serviceSigma: number;
  /** Mean time between two pauses of one server (GC, compaction, a noisy neighbour), ms. @default 5_000_000 */
  pauseEveryMs: number;
  /** Mean length of a pause, ms (log-normal). @default 1000 */
  pauseMeanMs: number;
  /** Shape σ of the pause length. @default 0.5 */
  pauseSigma: number;
  /** Delay of the `fixed` policy, ms. @default 10 */
  fixedHedgeMs: number;
  /**
   * Resolution of the client's timers, ms: a hedge timer fires on the first tick at or after its
   * due time (Node's timers count whole milliseconds). 0 for ideal timers. @default 1
   */
  timerResolutionMs: number;
  /** Percentile of the live latency after which `p95` hedges. @default 95 */
  hedgePercentile: number;
  /** Retry budget shared by the hedges of `p95`: window, ms. @default 10_000 */
  budgetWindowMs: number;
  /** … extras ÷ originals. @default 0.1 */
  budgetMaxRatio: number;
  /** … floor, extras per second. @default 3 */
  budgetMinPerSecond: number;
  /** Policies to run, in order. @default none, fixed, p95 */
  strategies: readonly HedgeStrategyName[];
}

/** Defaults of {@link TailOptions}, modelled on the Tail at Scale's fan-out: 100 sub-requests over 100 servers with rare pauses. */
export const TAIL_DEFAULTS: Readonly<TailOptions> = Object.freeze({
  seed: 1,
  durationMs: 600_000,
  warmupMs: 10_000,
  fanoutsPerSecond: 20,
  fanout: 100,
  servers: 100,
  serviceMeanMs: 4.4,
  serviceSigma: 0.45,
  pauseEveryMs: 5_000_000,
  pauseMeanMs: 1000,
  pauseSigma: 0.5,
  fixedHedgeMs: 10,
  timerResolutionMs: 1,
  hedgePercentile: 95,
  budgetWindowMs: 10_000,
  budgetMaxRatio: 0.1,
  budgetMinPerSecond: 3,
  strategies: HEDGE_STRATEGY_NAMES,
});

/** Latency percentiles, ms. */
export interface TailPercentiles {
  p50: number;
  p99: number;
  p999: number;
}

/** The figures of one hedging policy. */
export interface TailStrategyResult {
  name: HedgeStrategyName;
  label: string;
  /** Fan-outs counted (started after the warm-up), and how many had not finished at the end. */
  fanouts: { counted: number; unfinished: number };
  subRequests: number;
  hedges: number;
  /** Hedges the budget refused. */
  hedgesRefused: number;
  /** Extra requests: hedges ÷ sub-requests. */
  extraLoad: number;
  /** Completion time of the whole fan-out (its slowest sub-request). */
  fanoutMs: TailPercentiles;
  /** Latency of one sub-request as the caller saw it (first answer of original and hedge). */
  subRequestMs: TailPercentiles;
  /** Fan-out p99.9 of `none` ÷ this one's. */
  p999Cut: number;
  /** Per-second series: fan-out p99 (ms) and hedges ÷ sub-requests. */
  series: { p99Ms: number[]; extraLoad: number[] };
}

/** The published figures the report puts next to ours. */
export const TAIL_AT_SCALE_PAPER = Object.freeze({
  source: 'Dean & Barroso, "The Tail at Scale", Communications of the ACM 56(2), 2013',
  case: 'reading 1 000 keys spread over 100 servers; hedge after 10 ms',
  p999WithoutHedgingMs: 1800,
  p999WithHedgingMs: 74,
  extraRequests: 0.02,
  deferToP95ExtraLoad: 0.05,
});

/** The outcome of {@link simulateTail}. */
export interface TailResult {
  scenario: 'tail';
  options: TailOptions;
  /** The paper's figures, for comparison (not simulated). */
  paper: typeof TAIL_AT_SCALE_PAPER;
  /** Share of time a server is paused. */
  pausedShare: number;
  strategies: TailStrategyResult[];
  /** Simulation events processed (all policies). */
  events: number;
}

const LABELS: Record<HedgeStrategyName, string> = {
  none: 'no hedging',
  fixed: 'hedge after a fixed delay',
  p95: 'hedge at the live p95, budgeted',
};

/**
 * Validates and completes partial {@link TailOptions}.
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeTailOptions(options: Partial<TailOptions> = {}): TailOptions {
  const o: TailOptions = { ...TAIL_DEFAULTS };
  for (const [key, value] of Object.entries(options))
    if (value !== undefined) (o as unknown as Record<string, unknown>)[key] = value;
  const check = (key: keyof TailOptions, ok: (v: number) => boolean, expected: string) => {
    const v = o[key];
    if (!(typeof v === 'number' && Number.isFinite(v) && ok(v)))
      throw new InvalidOptionError(key, expected, v);
  };
  const int = (min: number, max: number) => (v: number) => Number.isInteger(v) && v >= min && v <= max;
  check('seed', int(-(2 ** 31), 2 ** 32), 'a 32-bit integer');
  check('durationMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  check('warmupMs', (v) => v >= 0 && v < o.durationMs, 'a number ≥ 0 and below durationMs');
  check('fanoutsPerSecond', (v) => v > 0 && v <= 10_000, 'a number > 0 and ≤ 10 000');
  check('fanout', int(1, 10_000), 'an integer between 1 and 10 000');
  check('servers', int(2, 100_000), 'an integer between 2 and 100 000');
  check('serviceMeanMs', (v) => v > 0 && v <= 60_000, 'a number > 0 and ≤ 60 000');
  check('serviceSigma', (v) => v >= 0 && v <= 3, 'a number between 0 and 3');
  check('pauseEveryMs', (v) => v > 0, 'a number > 0');
  check('pauseMeanMs', (v) => v >= 0 && v <= 600_000, 'a number between 0 and 600 000');
  check('pauseSigma', (v) => v >= 0 && v <= 3, 'a number between 0 and 3');
  check('fixedHedgeMs', (v) => v >= 0 && v <= 600_000, 'a number between 0 and 600 000');
  check('timerResolutionMs', (v) => v >= 0 && v <= 1000, 'a number between 0 and 1000');
  check('hedgePercentile', (v) => v > 0 && v < 100, 'a number between 0 and 100 (exclusive)');
  check('budgetWindowMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  check('budgetMaxRatio', (v) => v >= 0 && v <= 100, 'a number between 0 and 100');
  check('budgetMinPerSecond', (v) => v >= 0 && v <= 100_000, 'a number between 0 and 100 000');
  if (
    !Array.isArray(o.strategies) ||
    o.strategies.length === 0 ||
    o.strategies.some((s) => !HEDGE_STRATEGY_NAMES.includes(s))
  )
    throw new InvalidOptionError(
      'strategies',
      `a non-empty list of ${HEDGE_STRATEGY_NAMES.join(', ')}`,
      o.strategies,
    );
  return o;
}

/**
 * Runs the `tail` scenario: fan-out requests wait for their slowest sub-request, servers pause now
 * and then, and each policy decides when to send a second copy of a slow sub-request to another server.
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const result = simulateTail({ durationMs: 120_000 });
 * result.strategies.map((s) => [s.name, s.fanoutMs.p999, s.extraLoad]);
 * @see Dean & Barroso, "The Tail at Scale", CACM 2013 — hedged requests, deferred to the p95.
 */
export function simulateTail(
  options: Partial<TailOptions> = {},
  onProgress?: (label: string, fraction: number) => void,
): TailResult {
  const o = normalizeTailOptions(options);
  let events = 0;
  const strategies = o.strategies.map((name) => {
    const run = runPolicy(name, o, onProgress);
    events += run.events;
    return run.result;
  });
  const none = strategies.find((s) => s.name === 'none');
  if (none)
    for (const s of strategies)
      s.p999Cut = s.fanoutMs.p999 > 0 ? round(none.fanoutMs.p999 / s.fanoutMs.p999, 2) : 0;
  return {
    scenario: 'tail',
    options: o,
    paper: TAIL_AT_SCALE_PAPER,
    pausedShare: round(o.pauseMeanMs / (o.pauseEveryMs + o.pauseMeanMs), 6),
    strategies,
    events,
  };
}

/**
 * One server's pauses, generated lazily as virtual time moves forward. `finishMs(t, work)` is when a
 * request arriving at `t` that needs `work` ms of service completes: pauses stop the clock of its work.
 */
interface PausingServer {
  finishMs(arrivalMs: number, workMs: number): number;
}

function createPausingServer(random: SimRandom, o: TailOptions): PausingServer {
  // Upcoming pauses as [start, end) pairs, in order; those that ended before the last arrival are dropped.
  const pauses: number[] = [];
  let generatedUntil = random.exponential(o.pauseEveryMs);
  const extend = (untilMs: number) => {
    while (generatedUntil <= untilMs) {
      const start = generatedUntil;
      const end = start + (o.pauseMeanMs > 0 ? random.logNormal(o.pauseMeanMs, o.pauseSigma) : 0);
      pauses.push(start, end);
      generatedUntil = end + random.exponential(o.pauseEveryMs);
    }
  };
  return {
    finishMs(arrivalMs, workMs) {
      while (pauses.length > 0 && pauses[1]! <= arrivalMs) pauses.splice(0, 2);
      let now = arrivalMs;
      let left = workMs;
      for (let i = 0; ; i += 2) {
        if (i >= pauses.length) extend(now + left);
        if (i >= pauses.length) return now + left;
        const start = pauses[i]!;
        const end = pauses[i + 1]!;
        if (start >= now + left) return now + left;
        if (start > now) left -= start - now;
        now = Math.max(now, end);
      }
    },
  };
}

function runPolicy(
  name: HedgeStrategyName,
  o: TailOptions,
  onProgress: ((label: string, fraction: number) => void) | undefined,
): { result: TailStrategyResult; events: number } {
  const sim: Simulation = createSimulation(0);
  const root = createSimRandom(o.seed);
  const arrivals = root.fork(1);
  const routing = root.fork(2);
  const service = root.fork(3);
  const servers = Array.from({ length: o.servers }, (_, i) => createPausingServer(root.fork(100 + i), o));
  const budget = createRetryBudget({
    windowMs: o.budgetWindowMs,
    maxRatio: o.budgetMaxRatio,
    minPerSecond: o.budgetMinPerSecond,
    clock: sim.clock,
  });
  // The live latency of sub-requests as the caller sees them, in prazo's sliced window; its p95 is
  // read once a second (a percentile query scans the histogram), as a real client would.
  const window = createSlicedWindow({ slices: 6, sliceMs: 10_000, clock: sim.clock });
  let liveP95: number | undefined;

  const seconds = Math.ceil(o.durationMs / 1000);
  const fanoutHist = new LatencyHistogram();
  const subHist = new LatencyHistogram();
  const secondHist = new LatencyHistogram();
  const p99Series = new Array<number>(seconds).fill(0);
  const subsBySecond = new Array<number>(seconds).fill(0);
  const hedgesBySecond = new Array<number>(seconds).fill(0);
  let counted = 0;
  let finished = 0;
  let subRequests = 0;
  let hedges = 0;
  let refused = 0;

  // prazo's own hedge setting and delay rule (the client's hedging step uses the same function).
  const policy: HedgePolicy =
    name === 'none' ? false : name === 'fixed' ? { at: o.fixedHedgeMs } : { at: 'p95' };
  const delayFor = (): number | undefined => hedgeDelayMs(policy, liveP95);

  const res = o.timerResolutionMs;
  const tick = (ms: number): number => (res > 0 ? Math.ceil(ms / res) * res : ms);

  const pickServer = (except: number): number => {
    if (except < 0) return Math.floor(routing.next() * o.servers);
    const other = Math.floor(routing.next() * (o.servers - 1));
    return other >= except ? other + 1 : other;
  };

  const startFanout = (): void => {
    const startMs = sim.now();
    const countIt = startMs >= o.warmupMs;
    const second = Math.min(seconds - 1, Math.floor(startMs / 1000));
    let pending = o.fanout;
    if (countIt) counted++;
    const subDone = (latencyMs: number): void => {
      window.record(latencyMs);
      if (countIt) subHist.record(latencyMs);
      if (--pending > 0) return;
      if (!countIt) return;
      finished++;
      const total = sim.now() - startMs;
      fanoutHist.record(total);
      secondHist.record(total);
    };
    // Sub-requests answered before any hedge timer: one event walks through them in time order
    // (far fewer closures and a small heap, same order of events).
    // A typed array: its sort is numeric without a comparator call per pair (with one, the sort
    // took about a quarter of a default run's CPU profile).
    const all = new Float64Array(o.fanout);
    let count = 0;
    for (let k = 0; k < o.fanout; k++) {
      const server = pickServer(-1);
      const firstMs = servers[server]!.finishMs(startMs, service.logNormal(o.serviceMeanMs, o.serviceSigma));
      if (countIt) {
        subRequests++;
        subsBySecond[second]!++;
      }
      if (name === 'p95') budget.recordOriginal();
      const delay = delayFor();
      const fireMs = delay === undefined ? Number.POSITIVE_INFINITY : tick(startMs + delay);
      if (firstMs <= fireMs) {
        all[count++] = firstMs;
        continue;
      }
      // Still unanswered after the delay: the hedge timer fires.
      sim.at(fireMs, () => {
        let doneMs = firstMs;
        // One hedge at most, and only if the shared retry budget grants it (the paper's fixed-delay
        // policy has no budget).
        const granted = name === 'fixed' || budget.tryConsume();
        if (granted) {
          const hedgeMs = servers[pickServer(server)]!.finishMs(
            sim.now(),
            service.logNormal(o.serviceMeanMs, o.serviceSigma),
          );
          doneMs = Math.min(firstMs, hedgeMs);
          if (countIt) {
            hedges++;
            hedgesBySecond[second]!++;
          }
        } else if (countIt) refused++;
        sim.at(doneMs, () => subDone(doneMs - startMs));
      });
    }
    if (count === 0) return;
    const answered = all.subarray(0, count).sort();
    let next = 0;
    const step = (): void => {
      const at = answered[next]!;
      while (next < answered.length && answered[next] === at) {
        next++;
        subDone(at - startMs);
      }
      if (next < answered.length) sim.at(answered[next]!, step);
    };
    sim.at(answered[0]!, step);
  };

  const meanGapMs = 1000 / o.fanoutsPerSecond;
  let next = arrivals.exponential(meanGapMs);
  const arrive = (): void => {
    startFanout();
    next += arrivals.exponential(meanGapMs);
    if (next < o.durationMs) sim.at(next, arrive);
  };
  sim.at(next, arrive);
  for (let s = 1; s <= seconds; s++) {
    sim.at(Math.min(s * 1000, o.durationMs), () => {
      const healthy = window.healthy().histogram;
      liveP95 = healthy.count > 0 ? healthy.percentile(o.hedgePercentile) : undefined;
      p99Series[s - 1] = secondHist.count > 0 ? round(secondHist.percentile(99), 2) : 0;
      secondHist.reset();
    });
  }
  sim.run(o.durationMs, onProgress ? (now) => onProgress(name, now / o.durationMs) : undefined);

  const pct = (h: LatencyHistogram): TailPercentiles => {
    const [p50 = 0, p99 = 0, p999 = 0] = h.percentiles([50, 99, 99.9]);
    return { p50: round(p50, 2), p99: round(p99, 2), p999: round(p999, 2) };
  };
  return {
    events: sim.processed(),
    result: {
      name,
      label:
        name === 'fixed'
          ? `hedge after ${o.fixedHedgeMs} ms`
          : name === 'p95'
            ? `hedge at the live p${o.hedgePercentile}, budgeted`
            : LABELS[name],
      fanouts: { counted, unfinished: counted - finished },
      subRequests,
      hedges,
      hedgesRefused: refused,
      extraLoad: subRequests > 0 ? round(hedges / subRequests, 4) : 0,
      fanoutMs: pct(fanoutHist),
      subRequestMs: pct(subHist),
      p999Cut: 1,
      series: {
        p99Ms: p99Series,
        extraLoad: subsBySecond.map((n, i) => (n > 0 ? round(hedgesBySecond[i]! / n, 4) : 0)),
      },
    },
  };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
