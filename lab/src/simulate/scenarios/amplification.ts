import { InvalidOptionError } from 'prazo';
import { createSlicedWindow, LatencyHistogram } from 'prazo/latency';
import type { AttemptOutcome } from 'prazo/policy';
import {
  type ClientStrategy,
  createStrategy,
  readTimeoutOutcome,
  type SimUserRequest,
  STRATEGY_NAMES,
  type StrategyName,
  type StrategySettings,
} from '../client-strategies.js';
import { createSimulation } from '../engine.js';
import { createSimRandom } from '../random.js';
import { createServerModel, type ServerModelOptions } from '../server-model.js';

/** Parameters of the `amplification` scenario. Durations in ms, rates per second. */
export interface AmplificationOptions {
  /** Seed of every random draw. @default 1 */
  seed: number;
  /** Simulated time, ms. @default 180_000 */
  durationMs: number;
  /** Offered load: user requests per second (Poisson arrivals). @default 1000 */
  rps: number;
  /** Workers of the dependency. @default 35 */
  servers: number;
  /** Mean service time, ms (log-normal). @default 28 (35 workers ÷ 28 ms = 1 250 rps: 80 % utilisation at 1 000 rps) */
  serviceMeanMs: number;
  /** Shape σ of the log-normal service time. @default 0.5 */
  serviceSigma: number;
  /** Requests that may wait for a worker before the dependency refuses with 503. @default 1000 */
  queueLimit: number;
  /** Latency of a refusal, ms. @default 1 */
  rejectMs: number;
  /** Drop queued requests whose client gave up (most servers cannot). @default false */
  cancelAbandoned: boolean;
  /** When the trigger starts, ms from the start. @default 60_000 */
  triggerStartMs: number;
  /** How long the trigger lasts, ms. @default 30_000 */
  triggerDurationMs: number;
  /** Share of the workers left during the trigger. @default 0.5 */
  triggerCapacityFactor: number;
  /** Share of served requests failing with 500 during the trigger (an error burst). @default 0 */
  triggerErrorRate: number;
  /** How long a user waits, ms. @default 1000 */
  userDeadlineMs: number;
  /** Attempts per user request, the first included. @default 3 */
  attempts: number;
  /** Fixed timeout of naive, backoff and budget, ms. @default 500 */
  fixedTimeoutMs: number;
  /** Backoff base, ms. @default 50 */
  backoffBaseMs: number;
  /** Backoff cap, ms. @default 1000 */
  backoffCapMs: number;
  /** Retry budget window, ms. @default 10_000 */
  budgetWindowMs: number;
  /** Retry budget: extras / originals. @default 0.1 */
  budgetMaxRatio: number;
  /** Retry budget floor, extras per second. @default 3 */
  budgetMinPerSecond: number;
  /** Calibration slack of the prazo client. @default 1.4 */
  slack: number;
  /** Healthy run before the scenario, to measure the p99 the prazo client calibrates on, ms. @default 10_000 */
  warmupMs: number;
  /** A second is healthy when the dependency's p99 ≤ this × the healthy p99 … @default 2 */
  healthLatencyFactor: number;
  /** … and at least this share of the user requests started in it succeed. @default 0.95 */
  healthMinSuccess: number;
  /** Healthy seconds in a row that count as recovered, ms. @default 10_000 */
  sustainMs: number;
  /** Strategies to run, in order. @default naive, backoff, budget, prazo */
  strategies: readonly StrategyName[];
}

/** Defaults of {@link AmplificationOptions}: 1 000 rps at 80 % utilisation, half the capacity gone for 30 s. */
export const AMPLIFICATION_DEFAULTS: Readonly<AmplificationOptions> = Object.freeze({
  seed: 1,
  durationMs: 180_000,
  rps: 1000,
  servers: 35,
  serviceMeanMs: 28,
  serviceSigma: 0.5,
  queueLimit: 1000,
  rejectMs: 1,
  cancelAbandoned: false,
  triggerStartMs: 60_000,
  triggerDurationMs: 30_000,
  triggerCapacityFactor: 0.5,
  triggerErrorRate: 0,
  userDeadlineMs: 1000,
  attempts: 3,
  fixedTimeoutMs: 500,
  backoffBaseMs: 50,
  backoffCapMs: 1000,
  budgetWindowMs: 10_000,
  budgetMaxRatio: 0.1,
  budgetMinPerSecond: 3,
  slack: 1.4,
  warmupMs: 10_000,
  healthLatencyFactor: 2,
  healthMinSuccess: 0.95,
  sustainMs: 10_000,
  strategies: STRATEGY_NAMES,
});

/** A ratio over the three phases of the run and over all of it. */
export interface PhaseFigures {
  before: number;
  trigger: number;
  after: number;
  overall: number;
}

/** Per-second series of one strategy (index = second since the start). */
export interface AmplificationSeries {
  /** User requests that started. */
  offered: number[];
  /** Attempts that reached the dependency (originals, retries). */
  attempts: number[];
  /** Retries among them. */
  retries: number[];
  /** User requests that succeeded, by the second they ended (goodput). */
  goodput: number[];
  /** Share of the user requests started in the second that succeeded. */
  success: number[];
  /** Requests waiting in the dependency's queue at the end of the second. */
  queue: number[];
  /** p50 and p99 of the dependency's response time for the requests it served in the second, ms. */
  p50Ms: number[];
  p99Ms: number[];
}

/** The figures of one strategy. */
export interface AmplificationStrategyResult {
  name: StrategyName;
  settings: StrategySettings;
  /** Every user request ends exactly once: success, failure (the client gave up) or abandoned (the user's deadline passed first); the rest were still in flight when the run stopped. */
  requests: { offered: number; success: number; failure: number; abandoned: number; inFlight: number };
  /** Every attempt ends exactly once: ok, error (500), rejected (503), timed out, or in flight at the end. */
  attempts: { sent: number; ok: number; error: number; rejected: number; timedOut: number; inFlight: number };
  /** What the dependency did with the attempts (served includes those nobody waited for any more). */
  dependency: {
    arrived: number;
    rejected: number;
    served: number;
    servedAbandoned: number;
    dropped: number;
    inSystem: number;
  };
  /** Why clients gave up, by code. */
  failures: Record<string, number>;
  /** Load on the dependency ÷ offered load (attempts ÷ user requests). */
  load: PhaseFigures;
  /** Successful user requests per second. */
  goodputRps: PhaseFigures;
  /** Share of user requests that succeeded. */
  userSuccess: PhaseFigures;
  /** Latency the users saw on success, ms. */
  userLatencyMs: { p50: number; p99: number; p999: number };
  /** Whether and when the system was healthy again after the trigger ended. */
  recovery: { recovered: boolean; afterTriggerEndMs: number | null; healthyBeforeTrigger: boolean };
  series: AmplificationSeries;
}

/** The outcome of {@link simulateAmplification}. */
export interface AmplificationResult {
  scenario: 'amplification';
  options: AmplificationOptions;
  dependency: {
    capacityRps: number;
    utilisation: number;
    healthyP99Ms: number;
    healthyP50Ms: number;
    /** Where the healthy p99 was read from (see {@link CalibrationSource}). */
    calibratedOn: CalibrationSource;
  };
  strategies: AmplificationStrategyResult[];
  /** Simulation events processed (all strategies). */
  events: number;
}

/**
 * Validates and completes partial {@link AmplificationOptions}.
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeAmplificationOptions(
  options: Partial<AmplificationOptions> = {},
): AmplificationOptions {
  const o: AmplificationOptions = { ...AMPLIFICATION_DEFAULTS };
  for (const [key, value] of Object.entries(options))
    if (value !== undefined) (o as unknown as Record<string, unknown>)[key] = value;
  const positive = (key: keyof AmplificationOptions, max = 1e9) => {
    const v = o[key];
    if (!(typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= max))
      throw new InvalidOptionError(key, `a number > 0 and ≤ ${max}`, v);
  };
  const nonNegative = (key: keyof AmplificationOptions, max = 1e9) => {
    const v = o[key];
    if (!(typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max))
      throw new InvalidOptionError(key, `a number ≥ 0 and ≤ ${max}`, v);
  };
  const integer = (key: keyof AmplificationOptions, min: number, max: number) => {
    const v = o[key];
    if (!(Number.isInteger(v) && (v as number) >= min && (v as number) <= max))
      throw new InvalidOptionError(key, `an integer between ${min} and ${max}`, v);
  };
  integer('seed', -(2 ** 31), 2 ** 32);
  positive('durationMs', 3_600_000);
  positive('rps', 100_000);
  integer('servers', 1, 100_000);
  positive('serviceMeanMs', 60_000);
  nonNegative('serviceSigma', 3);
  integer('queueLimit', 0, 10_000_000);
  nonNegative('rejectMs', 60_000);
  if (typeof o.cancelAbandoned !== 'boolean')
    throw new InvalidOptionError('cancelAbandoned', 'a boolean', o.cancelAbandoned);
  nonNegative('triggerStartMs', o.durationMs);
  nonNegative('triggerDurationMs', o.durationMs);
  nonNegative('triggerCapacityFactor', 1);
  nonNegative('triggerErrorRate', 1);
  positive('userDeadlineMs', 3_600_000);
  integer('attempts', 1, 20);
  positive('fixedTimeoutMs', 3_600_000);
  nonNegative('backoffBaseMs', 60_000);
  nonNegative('backoffCapMs', 600_000);
  positive('budgetWindowMs', 3_600_000);
  nonNegative('budgetMaxRatio', 100);
  nonNegative('budgetMinPerSecond', 100_000);
  positive('slack', 3);
  positive('warmupMs', 600_000);
  positive('healthLatencyFactor', 1000);
  nonNegative('healthMinSuccess', 1);
  positive('sustainMs', o.durationMs);
  if (
    !Array.isArray(o.strategies) ||
    o.strategies.length === 0 ||
    o.strategies.some((s) => !STRATEGY_NAMES.includes(s))
  )
    throw new InvalidOptionError(
      'strategies',
      `a non-empty list of ${STRATEGY_NAMES.join(', ')}`,
      o.strategies,
    );
  return o;
}

/** Progress of a long run: which strategy, and how far in virtual time (0–1). */
export type ProgressListener = (label: string, fraction: number) => void;

/**
 * Runs the `amplification` scenario: a dependency at ~80 % utilisation loses capacity for a while;
 * each client strategy faces the same arrivals; the result says how much load each one put on the
 * dependency, how many users it served, and whether the dependency came back when the trigger ended.
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const result = simulateAmplification({ seed: 7 });
 * result.strategies.find((s) => s.name === 'naive')?.load.trigger; // ≈ 3
 * @see Google SRE book, "Handling Overload" and "Addressing Cascading Failures" (retry amplification,
 *   the 10 % retry budget); Bronson et al., "Metastable Failures in Distributed Systems" (HotOS 2021).
 */
export function simulateAmplification(
  options: Partial<AmplificationOptions> = {},
  onProgress?: ProgressListener,
): AmplificationResult {
  const o = normalizeAmplificationOptions(options);
  const serverOptions: ServerModelOptions = {
    servers: o.servers,
    serviceMeanMs: o.serviceMeanMs,
    serviceSigma: o.serviceSigma,
    queueLimit: o.queueLimit,
    rejectMs: o.rejectMs,
    cancelAbandoned: o.cancelAbandoned,
  };
  const healthy = measureHealthyLatency(o, serverOptions);
  let events = healthy.events;
  const strategies = o.strategies.map((name) => {
    const run = runStrategy(name, o, serverOptions, healthy.p99Ms, onProgress);
    events += run.events;
    return run.result;
  });
  const capacityRps = (o.servers * 1000) / o.serviceMeanMs;
  return {
    scenario: 'amplification',
    options: o,
    dependency: {
      capacityRps: round(capacityRps, 1),
      utilisation: round(o.rps / capacityRps, 3),
      healthyP99Ms: round(healthy.p99Ms, 2),
      healthyP50Ms: round(healthy.p50Ms, 2),
      calibratedOn: healthy.calibratedOn,
    },
    strategies,
    events,
  };
}

/**
 * The healthy latency the prazo client calibrates on: a run of the dependency alone at the offered
 * load, recorded in prazo's sliced window and read through its healthy-slice selection.
 */
function measureHealthyLatency(o: AmplificationOptions, serverOptions: ServerModelOptions) {
  const sim = createSimulation(0);
  const root = createSimRandom(o.seed).fork(4);
  const dependency = createServerModel(sim, root.fork(2), { ...serverOptions, cancelAbandoned: false });
  const arrivals = root.fork(1);
  const sliceMs = 1000;
  const window = createSlicedWindow({
    slices: Math.max(1, Math.ceil(o.warmupMs / sliceMs)),
    sliceMs,
    clock: sim.clock,
  });
  const meanGapMs = 1000 / o.rps;
  let next = arrivals.exponential(meanGapMs);
  const arrive = (): void => {
    dependency.submit((status, latencyMs) => {
      if (status !== 503) window.record(latencyMs, status !== 200);
      else window.record(undefined, true);
    });
    next += arrivals.exponential(meanGapMs);
    if (next < o.warmupMs) sim.at(next, arrive);
  };
  sim.at(next, arrive);
  sim.run(o.warmupMs);
  let histogram = window.healthy().histogram;
  let calibratedOn: CalibrationSource = 'healthy-slices';
  if (histogram.count === 0) {
    // Never healthy at this load (say, rps above capacity): calibrate on what there is, and say so —
    // the article's warning, a timeout from a degraded window protects nothing, then applies.
    histogram = new LatencyHistogram();
    for (const slice of window.slices()) histogram.merge(slice.histogram);
    calibratedOn = 'all-slices';
  }
  const [p50Ms = 0, p99Ms = 0] = histogram.percentiles([50, 99]);
  if (!(p99Ms > 0))
    return {
      p50Ms: o.serviceMeanMs,
      p99Ms: o.serviceMeanMs,
      calibratedOn: 'service-mean' as const,
      events: sim.processed(),
    };
  return { p50Ms, p99Ms, calibratedOn, events: sim.processed() };
}

/**
 * What the prazo client's healthy p99 was read from: the healthy slices of the warm-up (the normal
 * case), all of its slices (no slice was healthy: the dependency is overloaded even without the
 * trigger), or the mean service time (the warm-up served nothing).
 */
export type CalibrationSource = 'healthy-slices' | 'all-slices' | 'service-mean';

interface TrackedRequest extends SimUserRequest {
  ended: boolean;
  second: number;
}

function runStrategy(
  name: StrategyName,
  o: AmplificationOptions,
  serverOptions: ServerModelOptions,
  healthyP99Ms: number,
  onProgress: ProgressListener | undefined,
): { result: AmplificationStrategyResult; events: number } {
  const sim = createSimulation(0);
  const root = createSimRandom(o.seed);
  const arrivals = root.fork(1);
  const dependency = createServerModel(sim, root.fork(2), serverOptions);
  const strategy: ClientStrategy = createStrategy(name, o, {
    clock: sim.clock,
    random: root.fork(3),
    healthyP99Ms,
    userDeadlineMs: o.userDeadlineMs,
  });

  const seconds = Math.ceil(o.durationMs / 1000);
  const zeros = () => new Array<number>(seconds).fill(0);
  const offered = zeros();
  const attemptsBySecond = zeros();
  const retries = zeros();
  const goodput = zeros();
  const successByStart = zeros();
  const endedByStart = zeros();
  const queue = zeros();
  const p50Ms = zeros();
  const p99Ms = zeros();
  const secondOf = (t: number) => Math.min(seconds - 1, Math.floor(t / 1000));

  const requests = { offered: 0, success: 0, failure: 0, abandoned: 0, inFlight: 0 };
  const attempts = { sent: 0, ok: 0, error: 0, rejected: 0, timedOut: 0, inFlight: 0 };
  const failures: Record<string, number> = {};
  const served = new LatencyHistogram();
  const userLatency = new LatencyHistogram();

  // The user leaves at the deadline whatever the client is doing. A client that finishes later (a
  // naive one keeps retrying) did its work for nobody: the request counts as abandoned.
  const end = (request: TrackedRequest, result: 'success' | 'failure', code?: string): void => {
    if (request.ended) throw new Error('simulator bookkeeping: a user request ended twice');
    request.ended = true;
    const outcome = sim.now() - request.startMs > o.userDeadlineMs ? 'abandoned' : result;
    requests.inFlight--;
    requests[outcome]++;
    endedByStart[request.second]!++;
    if (outcome === 'success') {
      successByStart[request.second]!++;
      goodput[secondOf(sim.now())]!++;
      userLatency.record(sim.now() - request.startMs);
    }
    if (outcome === 'failure' && code !== undefined) failures[code] = (failures[code] ?? 0) + 1;
  };

  const afterFailure = (request: TrackedRequest, outcome: AttemptOutcome): void => {
    const decision = strategy.afterFailure(request, outcome);
    if (decision.retry) sim.after(decision.delayMs, () => attempt(request));
    else end(request, 'failure', decision.code);
  };

  const attempt = (request: TrackedRequest): void => {
    const refusal = strategy.precheck(request);
    if (refusal !== null) {
      end(request, 'failure', refusal);
      return;
    }
    const timeoutMs = strategy.attemptTimeoutMs(request);
    request.attemptsMade++;
    attempts.sent++;
    attempts.inFlight++;
    const second = secondOf(sim.now());
    attemptsBySecond[second]!++;
    if (request.attemptsMade > 1) retries[second]!++;
    let settled = false;
    const job = dependency.submit((status, latencyMs) => {
      if (status !== 503) served.record(latencyMs);
      if (settled) return; // the client stopped waiting: the answer is read by nobody
      settled = true;
      attempts.inFlight--;
      sim.cancel(timer);
      if (status === 200) {
        attempts.ok++;
        end(request, 'success');
        return;
      }
      if (status === 503) attempts.rejected++;
      else attempts.error++;
      afterFailure(request, { kind: 'response', status });
    });
    const timer = sim.after(timeoutMs, () => {
      if (settled) return;
      settled = true;
      attempts.inFlight--;
      attempts.timedOut++;
      dependency.abandon(job);
      afterFailure(request, readTimeoutOutcome());
    });
  };

  const meanGapMs = 1000 / o.rps;
  let next = arrivals.exponential(meanGapMs);
  const arrive = (): void => {
    const request: TrackedRequest = {
      startMs: sim.now(),
      attemptsMade: 0,
      deadline: undefined,
      ended: false,
      second: secondOf(sim.now()),
    };
    requests.offered++;
    requests.inFlight++;
    offered[request.second]!++;
    strategy.begin(request);
    attempt(request);
    next += arrivals.exponential(meanGapMs);
    if (next < o.durationMs) sim.at(next, arrive);
  };
  sim.at(next, arrive);

  const triggerEndMs = o.triggerStartMs + o.triggerDurationMs;
  if (o.triggerDurationMs > 0) {
    sim.at(o.triggerStartMs, () => {
      dependency.setCapacityFactor(o.triggerCapacityFactor);
      dependency.setErrorRate(o.triggerErrorRate);
    });
    sim.at(triggerEndMs, () => {
      dependency.setCapacityFactor(1);
      dependency.setErrorRate(0);
    });
  }
  // Close each second: sample the queue and the percentiles of what the dependency served in it.
  for (let s = 1; s <= seconds; s++) {
    sim.at(Math.min(s * 1000, o.durationMs), () => {
      queue[s - 1] = dependency.queueLength();
      const [p50 = 0, p99 = 0] = served.count > 0 ? served.percentiles([50, 99]) : [0, 0];
      p50Ms[s - 1] = round(p50, 2);
      p99Ms[s - 1] = round(p99, 2);
      served.reset();
    });
  }

  sim.run(o.durationMs, onProgress ? (now) => onProgress(name, now / o.durationMs) : undefined);

  const success = successByStart.map((n, i) => (endedByStart[i]! > 0 ? round(n / endedByStart[i]!, 4) : 1));
  const healthyAt = (s: number) =>
    p99Ms[s]! <= o.healthLatencyFactor * healthyP99Ms && success[s]! >= o.healthMinSuccess;
  const recovery = findRecovery(o, seconds, healthyAt);
  const phases = phaseBounds(o, seconds);
  const sum = (xs: number[], [a, b]: [number, number]) => {
    let total = 0;
    for (let i = a; i < b; i++) total += xs[i]!;
    return total;
  };
  const figures = (f: (range: [number, number]) => number): PhaseFigures => ({
    before: round(f(phases.before), 3),
    trigger: round(f(phases.trigger), 3),
    after: round(f(phases.after), 3),
    overall: round(f([0, seconds]), 3),
  });
  const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
  const [u50 = 0, u99 = 0, u999 = 0] = userLatency.percentiles([50, 99, 99.9]);
  const stats = dependency.stats;
  return {
    events: sim.processed(),
    result: {
      name,
      settings: strategy.describe(),
      requests,
      attempts,
      dependency: {
        arrived: stats.arrived,
        rejected: stats.rejected,
        served: stats.served,
        servedAbandoned: stats.servedAbandoned,
        dropped: stats.dropped,
        inSystem: dependency.inSystem(),
      },
      failures: Object.fromEntries(Object.entries(failures).sort(([a], [b]) => a.localeCompare(b))),
      load: figures((r) => ratio(sum(attemptsBySecond, r), sum(offered, r))),
      goodputRps: figures((r) => ratio(sum(goodput, r), r[1] - r[0])),
      userSuccess: figures((r) => ratio(sum(successByStart, r), sum(endedByStart, r))),
      userLatencyMs: { p50: round(u50, 2), p99: round(u99, 2), p999: round(u999, 2) },
      recovery: { ...recovery, healthyBeforeTrigger: everyHealthy(phases.before, healthyAt) },
      series: { offered, attempts: attemptsBySecond, retries, goodput, success, queue, p50Ms, p99Ms },
    },
  };
}

function phaseBounds(o: AmplificationOptions, seconds: number) {
  const start = Math.min(seconds, Math.floor(o.triggerStartMs / 1000));
  const end = Math.min(seconds, Math.max(start, Math.ceil((o.triggerStartMs + o.triggerDurationMs) / 1000)));
  return {
    before: [0, start] as [number, number],
    trigger: [start, end] as [number, number],
    after: [end, seconds] as [number, number],
  };
}

// The first second after the trigger that starts `sustainMs` of healthy seconds.
function findRecovery(o: AmplificationOptions, seconds: number, healthyAt: (s: number) => boolean) {
  const triggerEndMs = o.triggerStartMs + o.triggerDurationMs;
  const sustain = Math.max(1, Math.round(o.sustainMs / 1000));
  let run = 0;
  for (let s = Math.ceil(triggerEndMs / 1000); s < seconds; s++) {
    run = healthyAt(s) ? run + 1 : 0;
    if (run >= sustain) {
      const firstMs = (s - sustain + 1) * 1000;
      return { recovered: true, afterTriggerEndMs: Math.max(0, firstMs - triggerEndMs) };
    }
  }
  return { recovered: false, afterTriggerEndMs: null };
}

// The first seconds warm the queue up; judge the rest of the healthy phase.
function everyHealthy([a, b]: [number, number], healthyAt: (s: number) => boolean): boolean {
  for (let s = Math.min(a + 2, b); s < b; s++) if (!healthyAt(s)) return false;
  return true;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
