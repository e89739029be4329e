import { Deadline } from 'prazo';
import { createAdmission } from 'prazo/http';
import { LatencyHistogram } from 'prazo/latency';
import {
  acceptedStatus,
  type ConcurrencyGate,
  createAdaptiveThrottle,
  createConcurrencyGate,
} from 'prazo/policy';
import {
  type ClientStrategy,
  createStrategy,
  readTimeoutOutcome,
  type SimUserRequest,
} from '../client-strategies.js';
import { createSimulation, type Simulation } from '../engine.js';
import { createSimRandom, type SimRandom } from '../random.js';
import { scenarioOptionChecks } from '../scenario-options.js';
import { createServerModel, type ServerModel } from '../server-model.js';

/** The configurations compared by the `overload` scenario. */
export type OverloadConfigName = 'naive' | 'prazo' | 'protected';

/** Every configuration, in report order. */
export const OVERLOAD_CONFIG_NAMES: readonly OverloadConfigName[] = Object.freeze([
  'naive',
  'prazo',
  'protected',
]);

const LABELS: Readonly<Record<OverloadConfigName, string>> = {
  naive: 'naive',
  prazo: 'prazo',
  protected: 'prazo-protected',
};

/** Parameters of the `overload` scenario. Durations in ms. */
export interface OverloadOptions {
  /** Seed of every random draw. @default 1 */
  seed: number;
  /** Time during which requests arrive, ms (the run goes on for one `userDeadlineMs` more). @default 30_000 */
  durationMs: number;
  /** Requests started before this are not counted (the protections adapt meanwhile), ms. @default 5_000 */
  warmupMs: number;
  /** Instances of the supplier. @default 20 */
  instances: number;
  /** Workers per instance: each serves one request at a time. @default 8 */
  workers: number;
  /** Mean service time of a request, ms (log-normal). @default 20 */
  serviceMs: number;
  /** Shape σ of the service-time log-normal. @default 0.3 */
  serviceSigma: number;
  /** Offered load ÷ capacity (capacity = instances × workers ÷ serviceMs). @default 3 */
  factor: number;
  /** How long a user waits, ms: an answer after that is not goodput. @default 1_000 */
  userDeadlineMs: number;
  /** Client processes; each has its own retry budget, concurrency limit and throttle. @default 20 */
  clients: number;
  /** Attempts per request, the first included. @default 3 */
  attempts: number;
  /** Timeout of one attempt of the naive client, ms. @default 30_000 */
  naiveTimeoutMs: number;
  /** Calibration slack of the prazo clients (timeout = healthy p99 × slack). @default 1.4 */
  slack: number;
  /** Retry budget: extras ÷ originals, per client. @default 0.1 */
  budgetMaxRatio: number;
  /** Configurations to run, in order. @default naive, prazo, protected */
  configs: readonly OverloadConfigName[];
}

/** Defaults of {@link OverloadOptions}: 20 instances × 8 workers at 20 ms (8 000 rps), offered 24 000 rps. */
export const OVERLOAD_DEFAULTS: Readonly<OverloadOptions> = Object.freeze({
  seed: 1,
  durationMs: 30_000,
  warmupMs: 5_000,
  instances: 20,
  workers: 8,
  serviceMs: 20,
  serviceSigma: 0.3,
  factor: 3,
  userDeadlineMs: 1_000,
  clients: 20,
  attempts: 3,
  naiveTimeoutMs: 30_000,
  slack: 1.4,
  budgetMaxRatio: 0.1,
  configs: OVERLOAD_CONFIG_NAMES,
});

/** The figures of one configuration, over the requests started after the warm-up. */
export interface OverloadConfigResult {
  name: OverloadConfigName;
  label: string;
  /** User requests started after the warm-up: answered in time, failed, answered late, still in flight one user deadline after the arrivals stopped. */
  requests: { offered: number; inTime: number; failed: number; late: number; inFlight: number };
  /** Requests answered within the user's deadline, per second, between the warm-up and the end of the arrivals. */
  goodputRps: number;
  /** {@link goodputRps} ÷ the supplier's capacity. */
  goodputShare: number;
  /** Requests started after the warm-up and answered in time ÷ those requests. */
  successShare: number;
  /** Time from the supplier's receiving a request to its answer, for the requests it ran, ms. */
  admittedLatencyMs: { p50: number; p99: number };
  /** What users waited for the requests answered in time (client-side queueing and retries included), ms. */
  userLatencyMs: { p50: number; p99: number };
  /** Attempts that reached the supplier between the warm-up and the end of the arrivals ÷ user requests offered then. */
  amplification: number;
  /** What the supplier did between the warm-up and the end of the arrivals (with attempts of any request). */
  supplier: {
    received: number;
    /** Ran on a worker. */
    served: number;
    /** Ran although the caller had stopped waiting (attempt timed out, or the user's deadline passed). */
    servedForNobody: number;
    /** Refused with 504 (deadline expired or too short) and 503 (queue full, CoDel). */
    refused504: number;
    refused503: number;
  };
  /** Requests the clients refused locally, never sent. */
  clientRefused: { concurrency: number; throttle: number; deadline: number };
  /** Per second since the start (warm-up and drain included): requests answered in time, and the clients' mean concurrency limit (0 without one). */
  series: { goodput: number[]; limit: number[] };
}

/** The outcome of {@link simulateOverload}. */
export interface OverloadResult {
  scenario: 'overload';
  options: OverloadOptions;
  supplier: { capacityRps: number; offeredRps: number; healthyP99Ms: number };
  configs: OverloadConfigResult[];
  /** Simulation events processed (all configurations). */
  events: number;
}

/**
 * Validates and completes partial {@link OverloadOptions}.
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeOverloadOptions(options: Partial<OverloadOptions> = {}): OverloadOptions {
  const c = scenarioOptionChecks(OVERLOAD_DEFAULTS, options);
  const o = c.options;
  c.integer('seed', -(2 ** 31), 2 ** 32, 'a 32-bit integer');
  c.number('durationMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  c.number('warmupMs', (v) => v >= 0 && v < o.durationMs, 'a number ≥ 0 and below durationMs');
  c.integer('instances', 1, 1_000);
  c.integer('workers', 1, 10_000);
  c.number('serviceMs', (v) => v > 0 && v <= 60_000, 'a number > 0 and ≤ 60 000');
  c.number('serviceSigma', (v) => v >= 0 && v <= 3, 'a number from 0 to 3');
  c.number('factor', (v) => v > 0 && v <= 20, 'a number > 0 and ≤ 20');
  c.number('userDeadlineMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  c.integer('clients', 1, 10_000);
  c.integer('attempts', 1, 20);
  c.number('naiveTimeoutMs', (v) => v > 0 && v <= 3_600_000, 'a number > 0 and ≤ 3 600 000');
  c.number('slack', (v) => v > 0 && v <= 3, 'a number > 0 and ≤ 3');
  c.number('budgetMaxRatio', (v) => v >= 0 && v <= 100, 'a number from 0 to 100');
  c.oneOrMore('configs', OVERLOAD_CONFIG_NAMES);
  const capacity = (o.instances * o.workers * 1000) / o.serviceMs;
  c.number(
    'factor',
    (v) => capacity * v <= 200_000,
    `a number with an offered load ≤ 200 000 rps (capacity ${capacity} rps)`,
  );
  return o;
}

/**
 * Runs the `overload` scenario: open-loop Poisson arrivals at `factor` × the supplier's capacity,
 * spread over `clients` client processes and `instances` supplier instances (each `workers` workers
 * behind a first-in, first-out queue), against three configurations:
 *
 * - `naive`: a 30 s timeout, `attempts` immediate attempts, no budget, no deadline;
 * - `prazo`: the timeout calibrated on the healthy p99 × `slack`, the retry budget, the user's
 *   deadline propagated (the supplier answers 504 to an attempt that arrives expired, but what it
 *   has queued it still serves);
 * - `protected`: `prazo` plus, in each client, the adaptive concurrency limit (`ConcurrencyGate`,
 *   the gradient algorithm) and adaptive throttling, and in each instance the server admission
 *   (`createAdmission`: deadline-aware, `maxInFlight` = workers, CoDel queue with adaptive LIFO).
 *
 * Every policy is prazo's own code on the simulation's virtual clock.
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const result = simulateOverload({ instances: 2, durationMs: 10_000 });
 * result.configs.map((c) => c.goodputShare);
 */
export function simulateOverload(
  options: Partial<OverloadOptions> = {},
  onProgress?: (label: string, fraction: number) => void,
): OverloadResult {
  const o = normalizeOverloadOptions(options);
  const capacityRps = (o.instances * o.workers * 1000) / o.serviceMs;
  const healthy = measureHealthyP99(o);
  let events = healthy.events;
  const configs = o.configs.map((name) => {
    const run = runConfig(name, o, capacityRps, healthy.p99Ms, onProgress);
    events += run.events;
    return run.result;
  });
  return {
    scenario: 'overload',
    options: o,
    supplier: {
      capacityRps: round(capacityRps, 1),
      offeredRps: round(capacityRps * o.factor, 1),
      healthyP99Ms: round(healthy.p99Ms, 2),
    },
    configs,
    events,
  };
}

/** The p99 the prazo clients calibrate on: one instance alone at half its capacity. */
function measureHealthyP99(o: OverloadOptions): { p99Ms: number; events: number } {
  const sim = createSimulation(0);
  const random = createSimRandom(o.seed).fork(9);
  const server = serverModel(sim, random.fork(1), o);
  const histogram = new LatencyHistogram();
  const gapMs = (2 * o.serviceMs) / o.workers;
  const untilMs = Math.max(2_000, 2_000 * gapMs);
  const arrivals = random.fork(2);
  const arrive = (): void => {
    server.submit((_status, latencyMs) => histogram.record(latencyMs));
    sim.after(arrivals.exponential(gapMs), arrive);
  };
  sim.at(0, arrive);
  sim.run(untilMs);
  return { p99Ms: histogram.percentile(99), events: sim.processed() };
}

function serverModel(sim: Simulation, random: SimRandom, o: OverloadOptions): ServerModel {
  // Deadline-blind, unbounded: the supplier queues whatever it is sent.
  return createServerModel(sim, random, {
    servers: o.workers,
    serviceMeanMs: o.serviceMs,
    serviceSigma: o.serviceSigma,
    queueLimit: Number.MAX_SAFE_INTEGER,
    rejectMs: 0,
    cancelAbandoned: false,
  });
}

interface Request extends SimUserRequest {
  readonly counted: boolean;
  readonly client: number;
  ended: boolean;
}

/** One client process of the protected configuration: its concurrency gate and throttle. */
interface Protections {
  gate: ConcurrencyGate;
  throttle: ReturnType<typeof createAdaptiveThrottle>;
}

/** The answer of the supplier to one attempt. */
type Answer = (status: 200 | 503 | 504) => void;

function runConfig(
  name: OverloadConfigName,
  o: OverloadOptions,
  capacityRps: number,
  healthyP99Ms: number,
  onProgress: ((label: string, fraction: number) => void) | undefined,
): { result: OverloadConfigResult; events: number } {
  const sim = createSimulation(0);
  const root = createSimRandom(o.seed);
  const arrivals = root.fork(1);
  const pick = root.fork(3);
  const prazo = name !== 'naive';
  const guarded = name === 'protected';
  const strategyOptions = {
    attempts: o.attempts,
    fixedTimeoutMs: o.naiveTimeoutMs,
    backoffBaseMs: 0,
    backoffCapMs: 0,
    budgetWindowMs: 10_000,
    budgetMaxRatio: o.budgetMaxRatio,
    budgetMinPerSecond: 1,
    slack: o.slack,
  };
  const strategies: ClientStrategy[] = [];
  const protections: Protections[] = [];
  for (let i = 0; i < o.clients; i++) {
    const random = root.fork(100 + i);
    strategies.push(
      createStrategy(prazo ? 'prazo' : 'naive', strategyOptions, {
        clock: sim.clock,
        random,
        healthyP99Ms,
        userDeadlineMs: o.userDeadlineMs,
      }),
    );
    if (guarded)
      protections.push({
        gate: createConcurrencyGate({}, random.fork(1).next),
        throttle: createAdaptiveThrottle(),
      });
  }

  // Each client's read timeout: a supplier silent for two of them gets no waiting call.
  const readMs = strategies.map((strategy) => strategy.describe().attemptTimeoutMs);

  // The supplier's instances.
  const supplier = { received: 0, served: 0, servedForNobody: 0, refused504: 0, refused503: 0 };
  const admitted = new LatencyHistogram();
  const servers: ServerModel[] = [];
  const admissions: ReturnType<typeof createAdmission>[] = [];
  for (let i = 0; i < o.instances; i++) {
    servers.push(serverModel(sim, root.fork(1000 + i), o));
    if (guarded) admissions.push(createAdmission({ maxInFlight: o.workers, clock: sim.clock }));
  }
  let nextInstance = 0;

  /** Sends one attempt of `request` to an instance; `answer` is called once, `gone()` says whether the caller still waits. */
  const send = (request: Request, gone: () => boolean, answer: Answer): void => {
    const instance = nextInstance++ % o.instances;
    const server = servers[instance]!;
    const arrivedMs = sim.now();
    // The supplier's figures cover what it did after the warm-up, whoever sent it.
    const measured = (): boolean => sim.now() >= o.warmupMs && sim.now() < o.durationMs;
    if (measured()) supplier.received++;
    const serve = (done: () => void) =>
      server.submit(() => {
        done();
        if (measured()) {
          supplier.served++;
          admitted.record(sim.now() - arrivedMs);
          if (gone() || sim.now() - request.startMs > o.userDeadlineMs) supplier.servedForNobody++;
        }
        answer(200);
      });
    const refuse = (status: 503 | 504) => {
      if (measured()) supplier[status === 503 ? 'refused503' : 'refused504']++;
      answer(status);
    };
    if (!prazo) {
      serve(() => undefined);
      return;
    }
    const remainingMs = request.deadline!.limitMs - arrivedMs;
    if (!guarded) {
      // The prazo adapter: an attempt that arrives expired gets a 504; the rest joins the queue.
      if (remainingMs <= 0) refuse(504);
      else serve(() => undefined);
      return;
    }
    const deadline = Deadline.at(request.deadline!.limitMs, sim.clock);
    admissions[instance]!.offer(
      '/work',
      deadline,
      'default',
      (ticket) =>
        serve(() => {
          deadline.dispose();
          ticket.release(true);
        }),
      (refusal) => {
        deadline.dispose();
        refuse(refusal.status);
      },
    );
  };

  // Arrivals stop at durationMs; the run goes on for one user deadline so that every request counted
  // has had its chance to be answered in time.
  const endMs = o.durationMs + o.userDeadlineMs;
  const seconds = Math.ceil(endMs / 1000);
  const goodput = new Array<number>(seconds).fill(0);
  const limitSeries = new Array<number>(seconds).fill(0);
  const requests = { offered: 0, inTime: 0, failed: 0, late: 0, inFlight: 0 };
  const clientRefused = { concurrency: 0, throttle: 0, deadline: 0 };
  const userLatency = new LatencyHistogram();
  let goodputAnswers = 0;

  const end = (request: Request, ok: boolean): void => {
    if (request.ended) return;
    request.ended = true;
    request.deadline?.dispose();
    const now = sim.now();
    const inTime = ok && now - request.startMs <= o.userDeadlineMs;
    // Goodput: answers in time while the arrivals run at full rate, whenever their request started.
    if (inTime) {
      goodput[Math.min(seconds - 1, Math.floor(now / 1000))]!++;
      if (now >= o.warmupMs && now < o.durationMs) goodputAnswers++;
    }
    if (!request.counted) return;
    requests.inFlight--;
    if (inTime) {
      requests.inTime++;
      userLatency.record(now - request.startMs);
    } else if (ok) requests.late++;
    else requests.failed++;
  };

  /** Runs the attempts of a request; `finish(status)` is called once with the last status (0: timed out; -1: refused by the deadline check before an attempt). */
  const attempt = (request: Request, finish: (status: number) => void): void => {
    const strategy = strategies[request.client]!;
    const refusal = strategy.precheck(request);
    if (refusal !== null) {
      if (request.counted && request.attemptsMade === 0) clientRefused.deadline++;
      finish(-1);
      return;
    }
    const timeoutMs = strategy.attemptTimeoutMs(request);
    request.attemptsMade++;
    let settled = false;
    const timer = sim.after(timeoutMs, () => {
      settled = true;
      const decision = strategy.afterFailure(request, readTimeoutOutcome());
      if (decision.retry) sim.after(decision.delayMs, () => attempt(request, finish));
      else finish(0);
    });
    send(
      request,
      () => settled,
      (status) => {
        if (settled) return; // read by nobody
        settled = true;
        sim.cancel(timer);
        protections[request.client]?.gate.answered(sim.now());
        if (status === 200) {
          finish(200);
          return;
        }
        const decision = strategy.afterFailure(request, { kind: 'response', status });
        if (decision.retry) sim.after(decision.delayMs, () => attempt(request, finish));
        else finish(status);
      },
    );
  };

  /** One call through the protections of its client (see overload-step.ts, concurrency-step.ts and throttle-step.ts). */
  const guardedCall = (request: Request): void => {
    const { gate, throttle } = protections[request.client]!;
    if (throttle.reject(sim.now(), pick.next()) > 0) {
      if (request.counted) clientRefused.throttle++;
      end(request, false);
      return;
    }
    const run = (): void => {
      const startedMs = sim.now();
      strategies[request.client]!.begin(request);
      attempt(request, (status) => {
        const now = sim.now();
        // The gate learns from answers the supplier served and from calls that ran out of time.
        // A shed call (429/502/503/504) tells the limit the supplier is past its capacity.
        gate.release(
          status === 200 || status === 0 ? now - startedMs : undefined,
          startedMs,
          now,
          status === 429 || (status >= 502 && status <= 504),
        );
        // Accepted: an answer other than 429/502/503/504; a timeout or a refused retry is not.
        throttle.record(status > 0 && acceptedStatus(status), now);
        end(request, status === 200);
      });
    };
    const now = sim.now();
    if (gate.tryAcquire(now)) {
      run();
      return;
    }
    const limitMs = request.startMs + o.userDeadlineMs;
    // As the engine's waiter (concurrency-step.ts): a call must start in time for the healthy p99,
    // or for the latency the limit measures now when that is longer, judged again when its time comes.
    const startByNow = (): number => {
      const measured = gate.latencyMs();
      return limitMs - (measured !== undefined && measured > healthyP99Ms ? measured : healthyP99Ms);
    };
    const startBy = startByNow();
    const refuse = (): void => {
      if (request.counted) clientRefused.concurrency++;
      end(request, false);
    };
    // A supplier that answered nothing for two read timeouts with calls in flight: no wait.
    const silent = gate.silentForMs(now) >= 2 * readMs[request.client]!;
    if (silent || gate.queued >= gate.maxQueued || now + gate.expectedWaitMs(gate.queued) > startBy) {
      refuse();
      return;
    }
    let due: ReturnType<typeof sim.at> | undefined;
    const waiter = {
      done: false,
      grant() {
        waiter.done = true;
        if (due !== undefined) sim.cancel(due);
        // A turn that comes when the call can no longer start in time is declined.
        if (startByNow() < sim.now()) {
          refuse();
          return false;
        }
        run();
        return true;
      },
    };
    const onDue = (): void => {
      if (waiter.done) return;
      const later = startByNow();
      if (later > sim.now()) {
        due = sim.at(later, onDue);
        return;
      }
      waiter.done = true;
      gate.leave();
      refuse();
    };
    due = sim.at(startBy, onDue);
    gate.enqueue(waiter);
  };

  const gapMs = 1000 / (capacityRps * o.factor);
  let nextClient = 0;
  const arrive = (): void => {
    const counted = sim.now() >= o.warmupMs;
    const request: Request = {
      startMs: sim.now(),
      attemptsMade: 0,
      deadline: undefined,
      counted,
      client: nextClient++ % o.clients,
      ended: false,
    };
    if (counted) {
      requests.offered++;
      requests.inFlight++;
    }
    if (guarded) {
      // The user's deadline runs from the arrival, also while the call waits for a slot.
      request.deadline = Deadline.after(o.userDeadlineMs, sim.clock);
      guardedCall(request);
    } else {
      strategies[request.client]!.begin(request);
      attempt(request, (status) => end(request, status === 200));
    }
    const next = sim.now() + arrivals.exponential(gapMs);
    if (next < o.durationMs) sim.at(next, arrive);
  };
  sim.at(0, arrive);
  for (let s = 1; s <= seconds; s++)
    sim.at(Math.min(s * 1000, endMs), () => {
      let sum = 0;
      for (const p of protections) sum += p.gate.limit();
      limitSeries[s - 1] = protections.length > 0 ? round(sum / protections.length, 1) : 0;
    });
  sim.run(endMs, onProgress ? (now) => onProgress(LABELS[name], now / endMs) : undefined);

  const countedSeconds = (o.durationMs - o.warmupMs) / 1000;
  const goodputRps = goodputAnswers / countedSeconds;
  const [p50 = 0, p99 = 0] = admitted.count > 0 ? admitted.percentiles([50, 99]) : [0, 0];
  const [u50 = 0, u99 = 0] = userLatency.count > 0 ? userLatency.percentiles([50, 99]) : [0, 0];
  return {
    events: sim.processed(),
    result: {
      name,
      label: LABELS[name],
      requests,
      goodputRps: round(goodputRps, 1),
      goodputShare: round(goodputRps / capacityRps, 4),
      successShare: round(requests.offered > 0 ? requests.inTime / requests.offered : 0, 4),
      admittedLatencyMs: { p50: round(p50, 2), p99: round(p99, 2) },
      userLatencyMs: { p50: round(u50, 2), p99: round(u99, 2) },
      amplification: round(requests.offered > 0 ? supplier.received / requests.offered : 0, 3),
      supplier,
      clientRefused,
      series: { goodput, limit: limitSeries },
    },
  };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
