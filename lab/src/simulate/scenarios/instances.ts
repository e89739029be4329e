import { createBalancer, type InstanceOutcome, instanceOutcomeOfStatus } from 'prazo/balancer';
import { LatencyHistogram } from 'prazo/latency';
import { createRetryBudget } from 'prazo/policy';
import { createSimulation, type Simulation } from '../engine.js';
import { createSimRandom } from '../random.js';
import { scenarioOptionChecks } from '../scenario-options.js';
import { createServerModel, type ServerModel } from '../server-model.js';

/** The clients compared by the `instances` scenario. */
export type InstancesStrategyName = 'naive' | 'prazo';

/** Every client of the `instances` scenario, in report order. */
export const INSTANCES_STRATEGY_NAMES: readonly InstancesStrategyName[] = Object.freeze(['naive', 'prazo']);

/** What is wrong with one instance. */
export type InstanceKind = 'healthy' | 'sick' | 'slow' | 'refusing';

/** Parameters of the `instances` scenario. Durations in ms. */
export interface InstancesOptions {
  /** Seed of every random draw. @default 1 */
  seed: number;
  /** Simulated time, ms. @default 60_000 */
  durationMs: number;
  /** User requests per second (Poisson). @default 1_000 */
  rps: number;
  /** Instances of the dependency (3 … 100 is the range studied; up to 1 000 accepted). @default 10 */
  instances: number;
  /** Instances answering 503 (to `sickErrorRate` of their calls). @default 1 */
  sick: number;
  /** Share of the calls a sick instance answers with 503 at once. @default 1 */
  sickErrorRate: number;
  /** Instances that answer `slowExtraMs` later than the others. @default 1 */
  slow: number;
  /** Extra latency of a slow instance, ms. @default 150 */
  slowExtraMs: number;
  /** Instances that refuse connections. @default 0 */
  refusing: number;
  /** Workers per instance. @default 8 */
  workers: number;
  /** Mean service time on an idle worker, ms (log-normal). @default 5 */
  serviceMeanMs: number;
  /** Shape σ of that log-normal. @default 0.4 */
  serviceSigma: number;
  /** Requests that may wait per instance; one more is refused with 503. @default 64 */
  queueLimit: number;
  /** Time to a 503 (a refusal, a sick answer) or to a refused connect, ms. @default 1 */
  rejectMs: number;
  /** Attempts per user request, the first included. @default 2 */
  attempts: number;
  /** Timeout of one attempt, ms. @default 1_000 */
  attemptTimeoutMs: number;
  /** prazo's retry budget: window, ms. @default 10_000 */
  budgetWindowMs: number;
  /** … extras ÷ originals. @default 0.1 */
  budgetMaxRatio: number;
  /** … floor, extras per second. @default 3 */
  budgetMinPerSecond: number;
  /** Clients to run, in order. @default naive, prazo */
  strategies: readonly InstancesStrategyName[];
}

/** Defaults of {@link InstancesOptions}: ten instances, one always answering 503, one 150 ms slower. */
export const INSTANCES_DEFAULTS: Readonly<InstancesOptions> = Object.freeze({
  seed: 1,
  durationMs: 60_000,
  rps: 1_000,
  instances: 10,
  sick: 1,
  sickErrorRate: 1,
  slow: 1,
  slowExtraMs: 150,
  refusing: 0,
  workers: 8,
  serviceMeanMs: 5,
  serviceSigma: 0.4,
  queueLimit: 64,
  rejectMs: 1,
  attempts: 2,
  attemptTimeoutMs: 1_000,
  budgetWindowMs: 10_000,
  budgetMaxRatio: 0.1,
  budgetMinPerSecond: 3,
  strategies: INSTANCES_STRATEGY_NAMES,
});

/** Load of one instance under one client. */
export interface InstanceLoad {
  kind: InstanceKind;
  /** Attempts it received. */
  attempts: number;
  /** Its share of all attempts. */
  share: number;
  /** Attempts it failed (503, 500, timeout, refused connect). */
  failures: number;
}

/** The figures of one client. */
export interface InstancesStrategyResult {
  name: InstancesStrategyName;
  label: string;
  userRequests: number;
  /** Share of user requests that got a 200. */
  success: number;
  /** Attempts ÷ user requests. */
  load: number;
  /** Latency of the successful user requests, ms. */
  latencyMs: { p50: number; p99: number };
  /** Share of all attempts received by each kind of instance, taken together. */
  shareByKind: Record<InstanceKind, number>;
  /** Largest share of attempts received by one healthy instance (fair: 1 ÷ instances). */
  healthyMaxShare: number;
  /** Every instance, in order: the sick ones first, then the slow, the refusing, the healthy. */
  perInstance: InstanceLoad[];
  /** Per-second series: success, and the share of attempts that went to sick instances. */
  series: { success: number[]; sickShare: number[] };
  /** Ejections over the run (prazo only; 0 for naive). */
  ejections: number;
}

/** The outcome of {@link simulateInstances}. */
export interface InstancesResult {
  scenario: 'instances';
  options: InstancesOptions;
  strategies: InstancesStrategyResult[];
  /** Simulation events processed (all clients). */
  events: number;
}

const LABELS: Record<InstancesStrategyName, string> = {
  naive: 'round-robin, blind retries',
  prazo: "prazo's balancer, budgeted retries",
};

/**
 * Validates and completes partial {@link InstancesOptions}.
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeInstancesOptions(options: Partial<InstancesOptions> = {}): InstancesOptions {
  const c = scenarioOptionChecks(INSTANCES_DEFAULTS, options);
  const o = c.options;
  c.integer('seed', -(2 ** 31), 2 ** 32, 'a 32-bit integer');
  c.number('durationMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  c.number('rps', (v) => v > 0 && v <= 100_000, 'a number > 0 and ≤ 100 000');
  c.integer('instances', 1, 1_000);
  c.integer('sick', 0, o.instances, `an integer between 0 and instances (${o.instances})`);
  c.integer('slow', 0, o.instances - o.sick, 'an integer ≥ 0 with sick + slow ≤ instances');
  c.integer(
    'refusing',
    0,
    o.instances - o.sick - o.slow,
    'an integer ≥ 0 with sick + slow + refusing ≤ instances',
  );
  c.number('sickErrorRate', (v) => v >= 0 && v <= 1, 'a number between 0 and 1');
  c.number('slowExtraMs', (v) => v >= 0 && v <= 600_000, 'a number between 0 and 600 000');
  c.integer('workers', 1, 10_000);
  c.number('serviceMeanMs', (v) => v > 0 && v <= 60_000, 'a number > 0 and ≤ 60 000');
  c.number('serviceSigma', (v) => v >= 0 && v <= 3, 'a number between 0 and 3');
  c.integer('queueLimit', 0, 1_000_000);
  c.number('rejectMs', (v) => v >= 0 && v <= 60_000, 'a number between 0 and 60 000');
  c.integer('attempts', 1, 10);
  c.number('attemptTimeoutMs', (v) => v > 0 && v <= 600_000, 'a number > 0 and ≤ 600 000');
  c.number('budgetWindowMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  c.number('budgetMaxRatio', (v) => v >= 0 && v <= 100, 'a number between 0 and 100');
  c.number('budgetMinPerSecond', (v) => v >= 0 && v <= 100_000, 'a number between 0 and 100 000');
  c.oneOrMore('strategies', INSTANCES_STRATEGY_NAMES);
  return o;
}

/**
 * Runs the `instances` scenario: one dependency of `instances` instances (each an M/G/c queue), of
 * which `sick` answer 503, `slow` answer `slowExtraMs` later and `refusing` refuse connections, called
 * by a naive client (round-robin, retries sent at once to the next instance, no budget) and by
 * prazo's (the balancer of src/balancer — power of two choices over peak-EWMA, outlier ejection —
 * and prazo's retry budget).
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const result = simulateInstances({ instances: 100, sick: 10, slow: 10 });
 * result.strategies.map((s) => [s.name, s.success, s.shareByKind.sick]);
 */
export function simulateInstances(
  options: Partial<InstancesOptions> = {},
  onProgress?: (label: string, fraction: number) => void,
): InstancesResult {
  const o = normalizeInstancesOptions(options);
  let events = 0;
  const strategies = o.strategies.map((name) => {
    const run = runClient(name, o, onProgress);
    events += run.events;
    return run.result;
  });
  return { scenario: 'instances', options: o, strategies, events };
}

/** The kind of instance `i`: the sick ones first, then the slow, the refusing, the healthy. */
export function instanceKind(
  i: number,
  o: Pick<InstancesOptions, 'sick' | 'slow' | 'refusing'>,
): InstanceKind {
  if (i < o.sick) return 'sick';
  if (i < o.sick + o.slow) return 'slow';
  if (i < o.sick + o.slow + o.refusing) return 'refusing';
  return 'healthy';
}

function runClient(
  name: InstancesStrategyName,
  o: InstancesOptions,
  onProgress: ((label: string, fraction: number) => void) | undefined,
): { result: InstancesStrategyResult; events: number } {
  const sim: Simulation = createSimulation(0);
  const root = createSimRandom(o.seed);
  const arrivals = root.fork(1);
  const faults = root.fork(2);
  const kinds = Array.from({ length: o.instances }, (_, i) => instanceKind(i, o));
  const servers: ServerModel[] = kinds.map((_, i) =>
    createServerModel(sim, root.fork(100 + i), {
      servers: o.workers,
      serviceMeanMs: o.serviceMeanMs,
      serviceSigma: o.serviceSigma,
      queueLimit: o.queueLimit,
      rejectMs: o.rejectMs,
      cancelAbandoned: false,
    }),
  );
  const origins = kinds.map((_, i) => `http://instance-${i}`);
  const balancerRandom = root.fork(3);
  const balancer = createBalancer(origins, { random: () => balancerRandom.next() });
  const budget = createRetryBudget({
    windowMs: o.budgetWindowMs,
    maxRatio: o.budgetMaxRatio,
    minPerSecond: o.budgetMinPerSecond,
    clock: sim.clock,
  });
  let roundRobin = 0;

  const seconds = Math.ceil(o.durationMs / 1000);
  const attemptsTo = new Array<number>(o.instances).fill(0);
  const failuresOf = new Array<number>(o.instances).fill(0);
  const usersBySecond = new Array<number>(seconds).fill(0);
  const okBySecond = new Array<number>(seconds).fill(0);
  const attemptsBySecond = new Array<number>(seconds).fill(0);
  const sickBySecond = new Array<number>(seconds).fill(0);
  const latency = new LatencyHistogram();
  let users = 0;
  let succeeded = 0;
  let attempts = 0;

  /** Sends one attempt to instance `i`; `done(outcome, latencyMs)` once it ends. */
  const send = (i: number, done: (outcome: InstanceOutcome, latencyMs: number) => void): void => {
    const startMs = sim.now();
    const second = Math.min(seconds - 1, Math.floor(startMs / 1000));
    attempts++;
    attemptsTo[i]!++;
    attemptsBySecond[second]!++;
    if (kinds[i] === 'sick') sickBySecond[second]!++;
    const end = (outcome: InstanceOutcome) => {
      if (outcome !== 'success') failuresOf[i]!++;
      done(outcome, sim.now() - startMs);
    };
    const kind = kinds[i];
    if (kind === 'refusing') {
      sim.after(o.rejectMs, () => end('refused'));
      return;
    }
    if (kind === 'sick' && faults.next() < o.sickErrorRate) {
      sim.after(o.rejectMs, () => end('gateway'));
      return;
    }
    let settled = false;
    const timer = sim.after(o.attemptTimeoutMs, () => {
      settled = true;
      servers[i]!.abandon(job);
      end('timeout');
    });
    const extra = kind === 'slow' ? o.slowExtraMs : 0;
    const job = servers[i]!.submit((status) => {
      const answer = () => {
        if (settled) return;
        settled = true;
        sim.cancel(timer);
        end(instanceOutcomeOfStatus(status));
      };
      if (extra > 0) sim.after(extra, answer);
      else answer();
    });
  };

  const userRequest = (): void => {
    const startMs = sim.now();
    const second = Math.min(seconds - 1, Math.floor(startMs / 1000));
    users++;
    usersBySecond[second]!++;
    let made = 0;
    const finish = (ok: boolean) => {
      if (!ok) return;
      succeeded++;
      okBySecond[second]!++;
      latency.record(sim.now() - startMs);
    };
    if (name === 'naive') {
      const attempt = (): void => {
        made++;
        const i = roundRobin;
        roundRobin = (roundRobin + 1) % o.instances;
        send(i, (outcome) => {
          if (outcome === 'success') finish(true);
          else if (made < o.attempts) attempt();
          else finish(false);
        });
      };
      attempt();
      return;
    }
    budget.recordOriginal();
    const failed: number[] = [];
    const attempt = (i: number): void => {
      made++;
      send(i, (outcome, latencyMs) => {
        balancer.finished(i, outcome, latencyMs, sim.now());
        if (outcome !== 'success' && !failed.includes(i)) failed.push(i);
        if (outcome === 'success') finish(true);
        else if (made < o.attempts && budget.tryConsume()) attempt(balancer.pickRetry(failed, sim.now()));
        else finish(false);
      });
    };
    attempt(balancer.pick(sim.now()));
  };

  const meanGapMs = 1000 / o.rps;
  let next = arrivals.exponential(meanGapMs);
  const arrive = (): void => {
    userRequest();
    next += arrivals.exponential(meanGapMs);
    if (next < o.durationMs) sim.at(next, arrive);
  };
  sim.at(next, arrive);
  sim.run(
    o.durationMs + o.attemptTimeoutMs * o.attempts,
    onProgress ? (now) => onProgress(name, now / o.durationMs) : undefined,
  );

  const share = (n: number) => (attempts > 0 ? round(n / attempts, 4) : 0);
  const perInstance = kinds.map((kind, i) => ({
    kind,
    attempts: attemptsTo[i]!,
    share: share(attemptsTo[i]!),
    failures: failuresOf[i]!,
  }));
  const shareByKind: Record<InstanceKind, number> = { healthy: 0, sick: 0, slow: 0, refusing: 0 };
  for (const p of perInstance) shareByKind[p.kind] += p.attempts;
  for (const kind of Object.keys(shareByKind) as InstanceKind[]) shareByKind[kind] = share(shareByKind[kind]);
  const healthy = perInstance.filter((p) => p.kind === 'healthy');
  const [p50 = 0, p99 = 0] = latency.count > 0 ? latency.percentiles([50, 99]) : [];
  const ejections =
    name === 'prazo' ? balancer.snapshot(sim.now()).instances.reduce((sum, s) => sum + s.timesEjected, 0) : 0;
  return {
    events: sim.processed(),
    result: {
      name,
      label: LABELS[name],
      userRequests: users,
      success: users > 0 ? round(succeeded / users, 4) : 0,
      load: users > 0 ? round(attempts / users, 3) : 0,
      latencyMs: { p50: round(p50, 2), p99: round(p99, 2) },
      shareByKind,
      healthyMaxShare: healthy.length > 0 ? Math.max(...healthy.map((p) => p.share)) : 0,
      perInstance,
      series: {
        success: usersBySecond.map((n, s) => (n > 0 ? round(okBySecond[s]! / n, 4) : 1)),
        sickShare: attemptsBySecond.map((n, s) => (n > 0 ? round(sickBySecond[s]! / n, 4) : 0)),
      },
      ejections,
    },
  };
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
