import type { InstanceSnapshot } from '../balancer/balancer.js';
import type { DependencyResponse, RequestOptions } from '../engine/call.js';
import { createEngine, type Engine } from '../engine/engine.js';
import type { DependencyEventName, DependencyListener } from '../engine/events.js';
import type { PolicySnapshot } from '../engine/live-latency.js';
import { InvalidOptionError } from '../errors.js';
import type { SlicedWindow } from '../latency/sliced-window.js';
import { type CalibratedPolicy, calibrateTimeout } from '../policy/calibrate.js';
import type { RetryBudgetState } from '../policy/retry-budget.js';
import { createPoolTransport, type PoolTransportOptions } from '../transport/pool-transport.js';
import { transportBoundMs } from '../transport/transport.js';
import { type FetchRoute, fetchThrough } from './fetch.js';
import {
  type DependencyOptions,
  type NormalizedDependencyOptions,
  normalizeDependencyOptions,
} from './options.js';
import type { OverloadSnapshot } from './overload-snapshot.js';
import { overloadSnapshot } from './overload-snapshot.js';

/**
 * One remote dependency: its instances, its calibrated policy, its retry budget, its live latency
 * window — and the call that uses them all. Create one per dependency and share it.
 */
export interface Dependency {
  /** The dependency's name (events, errors, metrics). */
  readonly name: string;
  /**
   * One call: deadline, budget, pre-call check, attempts with calibrated timeouts, retries, hedge.
   * @throws (rejects) a prazo error with `code`, `attempts` and `cause` — see docs/client.md.
   */
  request(options: RequestOptions): Promise<DependencyResponse>;
  /**
   * The same call behind the Fetch API: a standard `Response`; `init.signal` is honoured. `input` is a
   * path, or an absolute URL on one of `origins`; another origin rejects with `FOREIGN_ORIGIN` (or
   * goes to `passThroughFetch`), never to this dependency.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** The policy in force now, with the provenance of p95 and p99. */
  policy(): PolicySnapshot;
  /**
   * The state of every instance now (draining ones included): `state` (`up`, `down`, `ejected`,
   * `probing`, `draining`), `ewmaMs`, `inFlight`, `share` of recent calls and the rest of the
   * balancer's view (see docs/instances.md). With a single instance the balancer is skipped: it is
   * reported up with share 1, and no latency estimate or count in flight.
   */
  instances(): InstanceSnapshot[];
  /** The state of the dependency's retry budget. */
  budget(): RetryBudgetState;
  /**
   * The overload protections now: the adaptive concurrency limit (limit, no-load and recent
   * latency, calls in flight and waiting) and the throttle (requests, accepts, rejection
   * probability), each `null` when off. See docs/overload.md.
   */
  overload(): OverloadSnapshot;
  /**
   * The origins calls go to now: `origins` as given, or the last good set a resolver answered
   * (empty before its first answer).
   */
  origins(): readonly string[];
  /** The dependency's time-sliced latency window (read it; do not record into it). */
  window(): SlicedWindow;
  /** Replaces the connect/read timeouts and attempts in force (the connect timeout of already-open pools stays). */
  setPolicy(policy: CalibratedPolicy): void;
  /** Recalibrates timeouts and attempts from a new healthy p99 (the drift monitor's hook) and applies them. */
  recalibrate(p99Ms: number): CalibratedPolicy;
  on<K extends DependencyEventName>(event: K, listener: DependencyListener<K>): this;
  off<K extends DependencyEventName>(event: K, listener: DependencyListener<K>): this;
  /** Aborts calls in flight, closes every connection and releases every timer. */
  close(): Promise<void>;
}

/**
 * Creates a {@link Dependency}.
 *
 * @throws {InvalidOptionError} naming the first unusable option.
 * @example
 * const inventory = dependency({
 *   name: 'inventory',
 *   origins: ['http://10.0.0.7:8080', 'http://10.0.0.8:8080'],
 *   latency: { p99Ms: 180, p95Ms: 90 },
 *   userDeadlineMs: 1500,
 *   hedge: { at: 'p95' },
 * });
 * const res = await inventory.request({ path: '/stock/42' });
 * const stock = await res.body.json();
 */
export function dependency(options: DependencyOptions): Dependency {
  const o = normalizeDependencyOptions(options);
  const initial = calibratePolicy(o, o.latency.p99Ms);
  const engine = createEngine(o, initial, () => createPoolTransport(poolOptions(o, initial)));
  return dependencyOf(o, engine);
}

/** The options of `dependency()`'s pools for the options `o` and the policy first in force. */
export function poolOptions(o: NormalizedDependencyOptions, initial: CalibratedPolicy): PoolTransportOptions {
  return {
    origins: o.origins,
    connections: o.connections,
    connectTimeoutMs: initial.connectMs,
    timeoutMs: transportBoundMs(initial.readMs),
    ...(o.lookup === undefined ? {} : { lookup: o.lookup }),
    ...(o.tls === undefined ? {} : { tls: o.tls }),
    ...(o.http2 ? { allowH2: true } : {}),
  };
}

/** The policy the options `o` calibrate for a healthy p99 of `p99Ms`. */
export function calibratePolicy(o: NormalizedDependencyOptions, p99Ms: number): CalibratedPolicy {
  return calibrateTimeout(
    {
      p99Ms,
      userDeadlineMs: o.userDeadlineMs,
      attempts: o.attempts,
      ...(o.latency.connectP99Ms === undefined ? {} : { connectP99Ms: o.latency.connectP99Ms }),
    },
    o.calibration,
  );
}

/**
 * The {@link Dependency} API over an engine built from the options `o` (`createEngine()`, with
 * {@link calibratePolicy}'s policy for `o.latency.p99Ms` in force): `dependency()`'s over its own
 * pools, and the undici interceptor's over the dispatcher it is composed onto.
 */
export function dependencyOf(o: NormalizedDependencyOptions, engine: Engine): Dependency {
  const clock = o.clock;
  const { ctx, gate, throttle } = engine;
  const transport = ctx.transport;
  const events = ctx.events;
  const route: FetchRoute = {
    name: o.name,
    get origins() {
      return engine.origins;
    },
    passThrough: o.passThroughFetch,
  };

  let closing: Promise<void> | undefined;
  const dep: Dependency = {
    name: o.name,
    request: engine.request,
    fetch(input, init) {
      return fetchThrough(dep, input, init, route);
    },
    policy: engine.policy,
    instances: engine.instances,
    budget: () => ctx.budget.state(),
    overload: () => overloadSnapshot(gate, throttle, clock.now()),
    origins: () => transport.origins,
    window: () => engine.window,
    setPolicy(policy) {
      if (
        typeof policy !== 'object' ||
        policy === null ||
        !(policy.readMs > 0) ||
        !(policy.connectMs > 0) ||
        !Number.isInteger(policy.attempts) ||
        policy.attempts < 1
      )
        throw new InvalidOptionError(
          'policy',
          'a calibrated policy { connectMs, readMs, attempts, warning }',
          policy,
        );
      engine.setPolicy(policy);
    },
    recalibrate(p99Ms) {
      const policy = calibratePolicy(o, p99Ms);
      dep.setPolicy(policy);
      return policy;
    },
    on(event, listener) {
      events.on(event, listener);
      return dep;
    },
    off(event, listener) {
      events.off(event, listener);
      return dep;
    },
    close() {
      if (closing === undefined) closing = engine.close();
      return closing;
    },
  };
  return dep;
}
