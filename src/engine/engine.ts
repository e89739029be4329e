import { Balancer, type InstanceSnapshot } from '../balancer/balancer.js';
import type { NormalizedBalancerOptions } from '../balancer/balancer-options.js';
import type { InstanceTransition } from '../balancer/instance-transition.js';
import { type Clock, systemClock } from '../clock.js';
import { COARSE_TICK_MS, CoarseTimer } from '../coarse-timer.js';
import { CancelledError, InvalidOptionError } from '../errors.js';
import type { FleetLatencySource } from '../latency/fleet-latency-source.js';
import { createSlicedWindow, type SlicedWindow } from '../latency/sliced-window.js';
import type { OriginsDiff } from '../membership/diff-origins.js';
import { createOriginPoller, type OriginPoller } from '../membership/origin-poller.js';
import type { OriginResolver } from '../membership/origin-resolver.js';
import {
  type AdaptiveThrottle,
  adaptiveThrottleFrom,
  type NormalizedAdaptiveThrottleOptions,
} from '../policy/adaptive-throttle.js';
import type { CalibratedPolicy } from '../policy/calibrate.js';
import { ConcurrencyGate, type NormalizedConcurrencyOptions } from '../policy/concurrency-gate.js';
import { createRetryBudget, type RetryBudget, type RetryBudgetOptions } from '../policy/retry-budget.js';
import type { Transport } from '../transport/transport.js';
import {
  Call,
  type CallHandle,
  type CallKeys,
  type DependencyResponse,
  type RequestOptions,
} from './call.js';
import { EventHub } from './events.js';
import { closedError, withHistory } from './history.js';
import { instanceEventName } from './instance-report.js';
import { LiveLatency, type PolicySnapshot } from './live-latency.js';
import {
  compose,
  type DependencyContext,
  failLater,
  type Handler,
  type Outcome,
  outcomeOf,
} from './pipeline.js';
import { admitStep } from './steps/admit-step.js';
import { attemptHandler } from './steps/attempt.js';
import { budgetStep } from './steps/budget-step.js';
import { cancelStep } from './steps/cancel-step.js';
import { deadlineStep } from './steps/deadline-step.js';
import { hedgeStep } from './steps/hedge.js';
import { membershipStep } from './steps/membership-step.js';
import { overloadStep } from './steps/overload-step.js';
import { requestEventsStep } from './steps/request-events-step.js';
import type { NormalizedRequeueOptions } from './steps/requeue.js';
import { retryStep } from './steps/retry.js';

/** What the engine reads of a dependency's options, validated and with every default applied. */
export interface EngineOptions {
  name: string;
  /** The static origins; empty when they come from `resolver`. */
  origins: readonly string[];
  resolver: OriginResolver | undefined;
  originsRefreshMs: number;
  originsTimeoutMs: number;
  latency: {
    p99Ms: number;
    p95Ms: number | undefined;
    source: 'static' | 'start';
  };
  userDeadlineMs: number;
  retryBudget: RetryBudgetOptions | RetryBudget;
  hedge: { at: 'p95' | number } | false;
  lastAttempt: 'read-timeout' | 'deadline';
  localMaxMs: number;
  liveMinSamples: number;
  liveRefreshMs: number;
  fleetLatency: FleetLatencySource | undefined;
  /** Validated (`normalizeBalancerOptions()`); `onTransition` is the engine's own. */
  balancer: NormalizedBalancerOptions;
  requeue: NormalizedRequeueOptions | false;
  concurrency: NormalizedConcurrencyOptions | false;
  throttle: NormalizedAdaptiveThrottleOptions | false;
  clock: Clock;
  random: () => number;
  /** `'auto'`: a call that is not GET, HEAD or OPTIONS and carries no key gets one minted. */
  idempotencyKey: 'auto' | false;
  /** `'instance'`: a keyed write's copies stay on the instance that may have run it (`Call.pinned`). */
  idempotencyScope: 'instance' | 'fleet';
}

/**
 * The engine of one dependency: the context its steps share and the steps of a call, composed once
 * in their order. Every entry point starts its calls here: `dependency().request()` (and its
 * `fetch()`) with {@link Engine.request}, the undici interceptor with {@link Engine.requestPrepared},
 * which takes the request as the interceptor already read it. Past the {@link Call} either makes,
 * the engine knows nothing of how the call was asked for.
 */
export interface Engine {
  /** What the steps share: the clock, the transport, the balancer, the timer, the events … */
  readonly ctx: DependencyContext;
  /** The time-sliced latency window the live p95/p99 are read from. */
  readonly window: SlicedWindow;
  /** The adaptive concurrency limit's slots, or null when `concurrency` is off. */
  readonly gate: ConcurrencyGate | null;
  /** Adaptive throttling, or null when `throttle` is off. */
  readonly throttle: AdaptiveThrottle | null;
  /** The origins calls may go to now: the static ones, or the last set the resolver answered. */
  readonly origins: readonly string[];
  /**
   * Starts one call of `options`: reads and checks them (an unusable one rejects with
   * `INVALID_OPTION`, naming it), then sends the call ({@link Engine.send}).
   */
  request(options: RequestOptions): Promise<DependencyResponse>;
  /**
   * Starts one call whose request an entry point read itself (the undici interceptor, from undici's
   * dispatch options), as {@link Engine.request} does but for two things the caller of this
   * method already holds: `headerPairs`, the caller's headers as the call sends them (a flat
   * `[name, value, …]` list of strings, prazo's own headers removed; null: none), taken as they
   * are in place of `options.headers`; and `handle`, the call's own abort handle, in place of
   * `options.signal` (see {@link CallHandle}). The outcome goes to `out` (an `Outcome`: the
   * entry point's own object, where a promise would be one more per call), never before this
   * method has returned.
   */
  requestPrepared(
    options: RequestOptions,
    headerPairs: string[] | null,
    handle: CallHandle,
    out: Outcome,
  ): void;
  /**
   * Sends `call` through every step. Always a promise: a dependency closed before the call rejects
   * with `CANCELLED` and its history, and so does a step that throws instead of rejecting.
   */
  send(call: Call): Promise<DependencyResponse>;
  /** The policy in force now, with the provenance of p95 and p99. */
  policy(): PolicySnapshot;
  /** Puts `policy` (already validated) in force, whole, and announces it (`policy` event). */
  setPolicy(policy: CalibratedPolicy): void;
  /** The state of every instance now (see `Dependency.instances()`). */
  instances(): InstanceSnapshot[];
  /**
   * Stops the calls: aborts attempts in flight, interrupts retry delays and queue places (each call
   * ends with `CANCELLED`), stops the resolver, closes the transport, then releases every timer and
   * listener. Call it once.
   */
  close(): Promise<void>;
}

/**
 * Builds the engine of a dependency from its options (`normalizeDependencyOptions()`), with `initial` as the policy in
 * force, over the transport `openTransport` returns (it must know the static origins; it is opened
 * once the options the engine validates itself, such as the retry budget's, have passed).
 *
 * @throws {InvalidOptionError} (`origins`) when a resolver of origins is given with a transport
 *   that cannot change its origins.
 */
export function createEngine(
  o: EngineOptions,
  initial: CalibratedPolicy,
  openTransport: () => Transport,
): Engine {
  const clock = o.clock;
  const budget: RetryBudget = isRetryBudget(o.retryBudget)
    ? o.retryBudget
    : createRetryBudget({ clock, ...o.retryBudget });
  // The budget runs on the dependency's clock (it can take the time a step already read) unless it
  // was given whole, or given a clock of its own.
  const ownBudget =
    !isRetryBudget(o.retryBudget) && (o.retryBudget.clock === undefined || o.retryBudget.clock === clock);
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
  const balancer = new Balancer(o.origins, { ...o.balancer, onTransition: announceTransition });
  const window = createSlicedWindow({ clock });
  const transport = openTransport();

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
  // On the real clock, due entries are swept after the loop's I/O: an answer already on the socket
  // is read before a read timeout that came due while the process itself was stalled.
  const timer = new CoarseTimer(clock, COARSE_TICK_MS, clock === systemClock ? setImmediate : undefined);
  const gate =
    o.concurrency === false
      ? null
      : new ConcurrencyGate(
          o.concurrency,
          o.random,
          (limit) => {
            if (events.has('concurrency-limit'))
              events.emit('concurrency-limit', { dependency: o.name, limit });
          },
          timer,
        );
  const throttle = o.throttle === false ? null : adaptiveThrottleFrom(o.throttle);
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
    timer,
    events,
    budget,
    live,
    policy: Object.freeze({ ...initial }),
    hedge: o.hedge,
    lastAttempt: o.lastAttempt,
    slowShare: 0,
    concurrency: gate,
    userDeadlineMs: o.userDeadlineMs,
    localMaxMs: o.localMaxMs,
    sleepers: new Set(),
    closed: false,
    serverTimingIgnored(reason, attempt) {
      if (events.has('server-timing-ignored'))
        events.emit('server-timing-ignored', {
          dependency: o.name,
          attempt: attempt.number,
          instance: attempt.origin,
          reason,
        });
    },
  };

  let origins = o.origins;
  /**
   * Live membership: the one place a new set of origins is handed to the instance choice and to the
   * transport (which opens pools for added origins and lets removed ones finish, then close).
   */
  const applyOrigins = (next: readonly string[], diff: OriginsDiff): void => {
    transport.setOrigins?.(next);
    ctx.setOrigins(next);
    origins = next;
    if (events.has('membership-changed'))
      events.emit('membership-changed', {
        dependency: o.name,
        origins: next,
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
  const handler: Handler = compose(
    [
      deadlineStep(ctx),
      requestEventsStep(ctx),
      cancelStep(ctx),
      ...(poller === undefined ? [] : [membershipStep(ctx, poller)]),
      admitStep(ctx),
      ...(throttle === null && gate === null ? [] : [overloadStep(ctx, throttle, gate)]),
      budgetStep(ctx, ownBudget),
    ],
    // The retry step turns the call into tries; each try's plan goes down through the hedge step
    // to the attempt.
    retryStep(ctx)(hedgeStep(ctx)(attemptHandler(ctx))),
  );

  const keys: CallKeys = Object.freeze({
    mint: o.idempotencyKey === 'auto',
    perInstance: o.idempotencyScope === 'instance',
  });
  let nextId = 1;
  const run = (call: Call, out: Outcome): void => {
    if (ctx.closed) {
      failLater(out, withHistory(closedError(o.name), call, o.name));
      return;
    }
    try {
      handler(call, clock.now(), out);
    } catch (error) {
      failLater(out, error);
    }
  };

  const start = (
    options: RequestOptions,
    headerPairs: string[] | null | undefined,
    handle: CallHandle | undefined,
    out: Outcome,
  ): void => {
    let call: Call;
    try {
      call = new Call(nextId++, options, clock, keys, headerPairs, handle);
    } catch (error) {
      failLater(out, error);
      return;
    }
    run(call, out);
  };

  return {
    ctx,
    window,
    gate,
    throttle,
    get origins() {
      return origins;
    },
    // Only `options`: a caller of `dependency().request()` cannot hand in pairs or a handle.
    request: (options) => outcomeOf((out) => start(options, undefined, undefined, out)),
    requestPrepared: start,
    send: (call) => outcomeOf((out) => run(call, out)),
    policy: snapshot,
    setPolicy(policy) {
      ctx.policy = Object.freeze({ ...policy });
      // The connect timeout reported is the one enforced: the pools' connects follow the policy.
      transport.setConnectTimeout?.(policy.connectMs);
      announce();
    },
    instances() {
      const list = balancer.snapshot(clock.now()).instances;
      if (ctx.sole !== -1) for (const instance of list) if (instance.index === ctx.sole) instance.share = 1;
      return list;
    },
    close() {
      ctx.closed = true;
      poller?.close();
      // Each call gets an error of its own: the call's history (`attempts`, `ledger`) is attached
      // to the error it fails with, so one error shared by every call would carry the history of
      // whichever call was handled last.
      const closedDuringCall = () => new CancelledError(`Dependency ${o.name} closed during the call.`);
      // Every call still running is cancelled as its caller would cancel it (`Call.cancel`): those
      // with attempts in flight are reached through the shared timer (each attempt's `onClose`),
      // those waiting out a delay or a place in the queue through `sleepers`.
      for (const entry of ctx.timer.entries()) entry.onClose?.(closedDuringCall());
      for (const call of [...ctx.sleepers]) call.cancel(closedDuringCall());
      return transport.close().finally(() => {
        ctx.timer.clear();
        events.clear();
      });
    },
  };
}

function isRetryBudget(value: unknown): value is RetryBudget {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RetryBudget).tryConsume === 'function' &&
    typeof (value as RetryBudget).recordOriginal === 'function'
  );
}
