import { type Balancer, createBalancer, type InstanceSnapshot } from '../balancer/balancer.js';
import type { InstanceTransition } from '../balancer/instance-transition.js';
import { CancelledError, InvalidOptionError } from '../errors.js';
import { createSlicedWindow, type SlicedWindow } from '../latency/sliced-window.js';
import type { OriginsDiff } from '../membership/diff-origins.js';
import { createOriginPoller, type OriginPoller } from '../membership/origin-poller.js';
import { createAdaptiveThrottle } from '../policy/adaptive-throttle.js';
import { type CalibratedPolicy, calibrateTimeout } from '../policy/calibrate.js';
import { createRetryBudget, type RetryBudget, type RetryBudgetState } from '../policy/retry-budget.js';
import { admitStep } from './admit-step.js';
import { attemptHandler } from './attempt.js';
import { budgetStep } from './budget-step.js';
import { Call, type DependencyResponse, type RequestOptions } from './call.js';
import { cancelStep } from './cancel-step.js';
import { CoarseTimer } from './coarse-timer.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { concurrencyStep } from './concurrency-step.js';
import { deadlineStep } from './deadline-step.js';
import { type DependencyEventName, type DependencyListener, EventHub } from './events.js';
import { fetchThrough } from './fetch.js';
import { hedgeStep } from './hedge.js';
import { closedError, withHistory } from './history.js';
import { instanceEventName } from './instance-report.js';
import { LiveLatency, type PolicySnapshot } from './live-latency.js';
import { membershipStep } from './membership-step.js';
import { type DependencyOptions, normalizeDependencyOptions } from './options.js';
import { type OverloadSnapshot, overloadSnapshot } from './overload-snapshot.js';
import { compose, type DependencyContext, type Handler } from './pipeline.js';
import { createPoolTransport } from './pool-transport.js';
import { requestEventsStep } from './request-events-step.js';
import { retryStep } from './retry.js';
import { throttleStep } from './throttle-step.js';
import type { Transport } from './transport.js';

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

/** Test seam: build a dependency over another transport (a fake, in unit tests). */
export interface DependencyInternals {
  transport?: (options: {
    origins: readonly string[];
    connections: number;
    connectTimeoutMs: number;
  }) => Transport;
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
export function dependency(options: DependencyOptions, internals: DependencyInternals = {}): Dependency {
  const o = normalizeDependencyOptions(options);
  const clock = o.clock;
  const calibrate = (p99Ms: number): CalibratedPolicy =>
    calibrateTimeout(
      {
        p99Ms,
        userDeadlineMs: o.userDeadlineMs,
        attempts: o.attempts,
        ...(o.latency.connectP99Ms === undefined ? {} : { connectP99Ms: o.latency.connectP99Ms }),
      },
      o.calibration,
    );
  const initial = calibrate(o.latency.p99Ms);
  const budget: RetryBudget = isRetryBudget(o.retryBudget)
    ? o.retryBudget
    : createRetryBudget({ clock, ...o.retryBudget });
  const events = new EventHub();
  // The balancer's transitions become events once the call that caused them has moved on: a
  // listener may then read `instances()` (the balancer must not be re-entered from its callback).
  const announceTransition = (transition: InstanceTransition): void => {
    const name = instanceEventName(transition);
    if (!events.has(name)) return;
    queueMicrotask(() =>
      events.emit(name, {
        dependency: o.name,
        instance: transition.origin,
        from: transition.from,
        to: transition.to,
        reason: transition.reason,
        atMs: transition.atMs,
        timesEjected: transition.timesEjected,
        untilMs: transition.untilMs,
      }),
    );
  };
  const balancer: Balancer = createBalancer(o.origins, {
    random: o.random,
    ...o.balancer,
    onTransition: announceTransition,
  });
  const window = createSlicedWindow({ clock });
  const transportFactory = internals.transport ?? createPoolTransport;
  const transport = transportFactory({
    origins: o.origins,
    connections: o.connections,
    connectTimeoutMs: initial.connectMs,
    timeoutMs: initial.readMs,
    ...(o.lookup === undefined ? {} : { lookup: o.lookup }),
  });

  // Built after ctx: the live window reports changes through it.
  let ctx: DependencyContext;
  const snapshot = (): PolicySnapshot => ({
    connectMs: ctx.policy.connectMs,
    readMs: ctx.policy.readMs,
    attempts: ctx.policy.attempts,
    warning: ctx.policy.warning,
    p95Ms: ctx.live.p95Ms,
    p99Ms: ctx.live.p99Ms,
    sources: { p95: ctx.live.p95Source, p99: ctx.live.p99Source },
  });
  const announce = (): void => {
    if (events.has('policy')) events.emit('policy', { dependency: o.name, policy: snapshot() });
  };
  const live = new LiveLatency({
    window,
    p99Ms: o.latency.p99Ms,
    p95Ms: o.latency.p95Ms,
    source: o.latency.source,
    minSamples: o.liveMinSamples,
    refreshMs: o.liveRefreshMs,
    onChange: announce,
    fleet: o.fleetLatency,
  });
  const gate =
    o.concurrency === false
      ? null
      : new ConcurrencyGate(o.concurrency, o.random, (limit) => {
          if (events.has('concurrency-limit'))
            events.emit('concurrency-limit', { dependency: o.name, limit });
        });
  const throttle = o.throttle === false ? null : createAdaptiveThrottle(o.throttle);
  ctx = {
    name: o.name,
    clock,
    random: o.random,
    transport,
    balancer,
    sole: balancer.size === 1 ? 0 : -1,
    requeue: o.requeue,
    requeueBudget: createRetryBudget({
      clock,
      windowMs: o.requeue === false ? 10_000 : o.requeue.windowMs,
      maxRatio: o.requeue === false ? 0 : o.requeue.maxRatio,
      minPerSecond: o.requeue === false ? 0 : o.requeue.minPerSecond,
    }),
    setOrigins(origins) {
      balancer.setOrigins(origins, clock.now());
      ctx.sole = balancer.size === 1 ? balancer.indexOf(origins[0]!) : -1;
    },
    timer: new CoarseTimer(clock),
    events,
    budget,
    live,
    policy: Object.freeze({ ...initial }),
    hedge: o.hedge,
    concurrency: gate,
    userDeadlineMs: o.userDeadlineMs,
    localMaxMs: o.localMaxMs,
    sleepers: new Set(),
    closed: false,
  };

  const route = { name: o.name, origins: o.origins, passThrough: o.passThroughFetch };
  /**
   * Live membership: the one place a new set of origins is handed to the instance choice and to the
   * transport (which opens pools for added origins and lets removed ones finish, then close).
   */
  const applyOrigins = (origins: readonly string[], diff: OriginsDiff): void => {
    transport.setOrigins?.(origins);
    ctx.setOrigins(origins);
    route.origins = origins;
    if (events.has('membership-changed'))
      events.emit('membership-changed', {
        dependency: o.name,
        origins,
        added: diff.added,
        removed: diff.removed,
      });
  };
  let poller: OriginPoller | undefined;
  if (o.resolver !== undefined) {
    if (transport.setOrigins === undefined)
      throw new InvalidOptionError(
        'origins',
        'a list of origins (this transport cannot change them)',
        o.resolver,
      );
    poller = createOriginPoller({
      resolve: o.resolver,
      clock,
      refreshMs: o.originsRefreshMs,
      timeoutMs: o.originsTimeoutMs,
      onChange: applyOrigins,
      onError(error, kept, consecutiveFailures) {
        if (events.has('membership-error'))
          events.emit('membership-error', { dependency: o.name, error, origins: kept, consecutiveFailures });
      },
    });
  }

  // The order of a call, written once.
  const send: Handler = compose(
    [
      deadlineStep(ctx),
      requestEventsStep(ctx),
      cancelStep(ctx),
      ...(poller === undefined ? [] : [membershipStep(ctx, poller)]),
      admitStep(ctx),
      ...(throttle === null ? [] : [throttleStep(ctx, throttle)]),
      ...(gate === null ? [] : [concurrencyStep(ctx, gate)]),
      budgetStep(ctx),
    ],
    // The retry step turns the call into tries; each try's plan goes down through the hedge step
    // to the attempt.
    retryStep(ctx)(hedgeStep(ctx)(attemptHandler(ctx))),
  );

  let nextId = 1;
  let closing: Promise<void> | undefined;
  const dep: Dependency = {
    name: o.name,
    request(requestOptions) {
      let call: Call;
      try {
        call = new Call(nextId++, requestOptions, clock);
      } catch (error) {
        return Promise.reject(error);
      }
      if (ctx.closed) return Promise.reject(withHistory(closedError(o.name), call, o.name));
      try {
        return send(call);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    fetch(input, init) {
      return fetchThrough(dep, input, init, route);
    },
    policy: snapshot,
    instances() {
      const now = clock.now();
      const list = balancer.snapshot(now).instances;
      if (ctx.sole !== -1) for (const instance of list) if (instance.index === ctx.sole) instance.share = 1;
      return list;
    },
    budget: () => budget.state(),
    overload: () => overloadSnapshot(gate, throttle, clock.now()),
    origins: () => transport.origins,
    window: () => window,
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
      ctx.policy = Object.freeze({ ...policy });
      announce();
    },
    recalibrate(p99Ms) {
      const policy = calibrate(p99Ms);
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
      if (closing !== undefined) return closing;
      ctx.closed = true;
      poller?.close();
      const error = new CancelledError(`Dependency ${o.name} closed during the call.`);
      for (const entry of ctx.timer.entries()) entry.onClose?.(error);
      for (const call of [...ctx.sleepers]) call.waitingOn?.interrupt(error);
      closing = transport.close().finally(() => {
        ctx.timer.clear();
        events.clear();
      });
      return closing;
    },
  };
  return dep;
}

function isRetryBudget(value: unknown): value is RetryBudget {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RetryBudget).tryConsume === 'function' &&
    typeof (value as RetryBudget).recordOriginal === 'function'
  );
}
