import type { LookupFunction } from 'node:net';
import type { BalancerOptions } from '../balancer/balancer-options.js';
import { normalizeBalancerOptions } from '../balancer/balancer-options.js';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { EngineOptions } from '../engine/engine.js';
import { normalizeRequeueOptions, type RequeueOptions } from '../engine/steps/requeue.js';
import { InvalidOptionError } from '../errors.js';
import type { FleetLatencySource } from '../latency/fleet-latency-source.js';
import type { OriginResolver } from '../membership/origin-resolver.js';
import { integerIn, objectOption, positiveMs } from '../option-checks.js';
import {
  type AdaptiveThrottleOptions,
  normalizeAdaptiveThrottleOptions,
} from '../policy/adaptive-throttle.js';
import type { CalibrationOptions } from '../policy/calibrate.js';
import { CALIBRATION_DEFAULTS } from '../policy/calibrate.js';
import { type ConcurrencyOptions, normalizeConcurrencyOptions } from '../policy/concurrency-gate.js';
import type { RetryBudget, RetryBudgetOptions } from '../policy/retry-budget.js';
import type { FetchFunction } from './fetch.js';

/**
 * The dependency's latency profile.
 * - `{ p99Ms, p95Ms?, connectP99Ms? }`: measured on a healthy window (e.g. `prazo calibrate`).
 * - `'auto'`: no profile yet; start from the largest p99 whose attempts fit `userDeadlineMs`.
 * - `{ auto: true, startP99Ms, startP95Ms? }`: no profile yet; start from these.
 *
 * In every case the dependency records its own attempts, and once its healthy window holds
 * `liveMinSamples` samples the live p95/p99 drive the hedge delay and the pre-call check.
 */
export type LatencyOption =
  | { p99Ms: number; p95Ms?: number; connectP99Ms?: number }
  | 'auto'
  | { auto: true; startP99Ms: number; startP95Ms?: number };

/** Hedging: a second copy to another instance when the first has not answered by `at`. */
export interface HedgeOptions {
  /** `'p95'`: the live p95 of the dependency; a number: fixed delay in ms. */
  at: 'p95' | number;
  /** Copies beyond the first; only 1 is supported. @default 1 */
  max?: 1;
}

/** Options of `dependency()`. */
export interface DependencyOptions {
  /** Name of the dependency, used in events, metrics and errors (low cardinality). */
  name: string;
  /**
   * Instances as `http(s)://host:port` origins, at least one; or a resolver of them, asked again
   * every `originsRefreshMs` (live membership: a function returning the origins, at once or as a
   * promise, or `dnsOrigins()`). With a resolver, a call waits for its first answer (within the
   * call's deadline); a failed or empty answer keeps the last good set (see docs/instances.md).
   */
  origins: readonly string[] | OriginResolver;
  /** Time between two resolutions of a resolver `origins`, in ms (a DNS TTL overrides it). @default 30000 */
  originsRefreshMs?: number;
  /** Longest a resolution may take before it counts as failed, in ms. @default 5000 */
  originsTimeoutMs?: number;
  /** Latency profile (see {@link LatencyOption}). */
  latency: LatencyOption;
  /** How long the end user waits for a call that has no deadline of its own, in ms. */
  userDeadlineMs: number;
  /** Attempts wanted per call, the first included; calibration may reduce them. @default 2 */
  attempts?: number;
  /** Connections per origin. @default 64 */
  connections?: number;
  /** Options of this dependency's own retry budget, or a budget shared with other dependencies. @default {} (10 s, 10 %, 3/s) */
  retryBudget?: RetryBudgetOptions | RetryBudget;
  /** Hedging, off by default. @default false */
  hedge?: HedgeOptions | false;
  /** Calibration knobs (slack, connect cap, overhead per attempt). @default CALIBRATION_DEFAULTS */
  calibration?: CalibrationOptions;
  /** Longest a call may hold this dependency, in ms: caps explicit and ambient deadlines. @default userDeadlineMs */
  localMaxMs?: number;
  /** Healthy samples needed before live p95/p99 replace the starting values. @default 200 */
  liveMinSamples?: number;
  /** Least time between two readings of the live window, in ms. @default 1000 */
  liveRefreshMs?: number;
  /**
   * The fleet's healthy p95/p99 (`createFleetLatencyFeed()`, read from Prometheus). While fresh they
   * replace the live window's; stale, the live window takes over, or with too few local samples the
   * last fleet figures stay. Read from memory at most once per `liveRefreshMs`. The dependency
   * neither starts nor closes the feed (one feed may serve several dependencies). @default none
   */
  fleetLatency?: FleetLatencySource;
  /**
   * How the instance of each attempt is chosen: peak-EWMA latency, outlier ejection, slow start
   * (see docs/instances.md; `random` defaults to the dependency's `random`). The balancer's own
   * `onTransition` is not taken: listen to the `instance-*` events. @default BALANCER_DEFAULTS
   */
  balancer?: Omit<BalancerOptions, 'onTransition'>;
  /**
   * Requeues of attempts that were never written, to another instance, without using one of the
   * caller's attempts (see {@link RequeueOptions}); `false`: none. @default REQUEUE_DEFAULTS
   */
  requeue?: RequeueOptions | false;
  /**
   * Adaptive concurrency limit (the gradient algorithm, see docs/overload.md): at most `limit` calls
   * in flight, the limit learnt from latency against the no-load latency; calls beyond it wait in a
   * bounded queue while they can still start in time for the p99, else fail with
   * `CONCURRENCY_LIMITED`. `true`: the defaults ({@link ConcurrencyOptions}). @default false
   */
  concurrency?: ConcurrencyOptions | boolean;
  /**
   * Adaptive throttling (Google SRE book): over a sliding window, reject calls locally with
   * probability max(0, (requests − K × accepts) / (requests + 1)), failing with `THROTTLED`
   * (see docs/overload.md). `true`: K = 2 over 10 s. @default false
   */
  throttle?: AdaptiveThrottleOptions | boolean;
  /**
   * What happens at an attempt's read timeout when no retry could follow it (no attempt left, the
   * retry budget or the concurrency limit would refuse one, the deadline would not hold another p99,
   * or the call may not be resent). `'read-timeout'`: it is abandoned and the call fails with
   * `READ_TIMEOUT`, a read timeout after it started. `'deadline'`: it keeps waiting, until the
   * call's deadline — abandoned, it would still load the dependency and nothing would be sent in
   * its place, and a dependency that queues (every instance slower at once, as during a capacity
   * drop) answers after the read timeout but within the deadline. With `'deadline'`, no retry
   * follows either while most recent attempts outlasted the read timeout (the dependency is slow as
   * a whole: a retry would queue behind the abandoned work), so every attempt then waits (both
   * copies of a hedged try: the first answer wins). When a retry can follow, `'deadline'` sends it
   * beside the attempt (to another instance; the attempt keeps its place and waits, the first
   * answer wins) if the call may have two copies in flight (what may be hedged: a safe method or an
   * `Idempotency-Key`), and cuts the attempt for it otherwise; `'read-timeout'` always cuts it.
   * See docs/overload.md.
   * @default 'read-timeout'
   */
  lastAttempt?: 'read-timeout' | 'deadline';
  /**
   * `'auto'`: every call that is not GET, HEAD or OPTIONS and carries no `Idempotency-Key` of its
   * own gets one minted for it (a random UUID, the same on every attempt and hedge of the call), and
   * so may be retried and hedged like an idempotent request — for servers that deduplicate by key
   * (prazo's `idempotency` server option, Stripe-style APIs). A call's own `idempotencyKey` option
   * overrides it. See docs/idempotency.md. @default false
   */
  idempotencyKey?: 'auto' | false;
  /**
   * Where the dependency's instances remember the keys of a keyed write (a POST or PATCH with an
   * `Idempotency-Key`, minted or the caller's own). `'instance'`: each instance its own (prazo's
   * in-memory store, the server default), so a key deduplicates only the copies that reach the
   * instance which ran the write — a keyed write is then never hedged or sent beside to another
   * instance, and a retry after an attempt whose request may have been written (a read timeout, a
   * lost answer) goes back to that attempt's instance, whose layer answers it from the first
   * execution; a retry after an answer, or after an attempt never written, may go anywhere.
   * `'fleet'`: the instances share one store (prazo's Redis store), so every copy may go to any
   * instance. With one origin (a single instance, or a load balancer the client sees as one) both
   * behave the same. See docs/idempotency.md. @default 'instance'
   */
  idempotencyScope?: 'instance' | 'fleet';
  /** @default systemClock */
  clock?: Clock;
  /** Uniform source in [0, 1) for backoff jitter, throttling and probe jitter. @default Math.random */
  random?: () => number;
  /**
   * Resolves the origins' host names when a connection opens, as `net.connect` takes it (service
   * discovery, a local hosts table, a DNS cache). @default dns.lookup
   */
  lookup?: LookupFunction;
  /**
   * TLS of the connections to `https:` origins: a private CA, a client certificate, the name to
   * verify (see {@link DependencyTlsOptions}). Applies to `dependency()`'s own pools; the interceptor
   * runs on your dispatcher, whose `connect` options set it there. @default Node's defaults
   */
  tls?: DependencyTlsOptions;
  /**
   * Speak HTTP/2 with `https:` origins that offer it through ALPN (HTTP/1.1 with the others): calls
   * are streams on up to `connections` connections per origin, and a cancelled attempt (a losing
   * hedge copy, a timeout) resets its stream, not the connection. @default false
   */
  http2?: boolean;
  /**
   * Where `fetch()` sends an absolute URL whose origin is not one of `origins`, untouched (e.g.
   * `globalThis.fetch` when `dep.fetch` replaces the global one). Without it such a call rejects with
   * `FOREIGN_ORIGIN` and nothing is sent. @default undefined (refuse)
   */
  passThroughFetch?: FetchFunction;
}

/** TLS of a dependency's connections (`tls.connect` options of the same names). */
export interface DependencyTlsOptions {
  /** Trusted CA certificates (PEM), replacing Node's list: a private CA. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Client certificate chain (PEM), for mutual TLS. */
  cert?: string | Buffer;
  /** Client private key (PEM), for mutual TLS. */
  key?: string | Buffer;
  /** The name to send as SNI and to verify the certificate against. @default the origin's host */
  servername?: string;
  /** Verify the server's certificate. Turn it off only against a test double. @default true */
  rejectUnauthorized?: boolean;
}

/** Defaults of {@link DependencyOptions}. */
export const DEPENDENCY_DEFAULTS = Object.freeze({
  attempts: CALIBRATION_DEFAULTS.attempts,
  connections: 64,
  hedge: false as const,
  concurrency: false as const,
  throttle: false as const,
  lastAttempt: 'read-timeout' as const,
  idempotencyKey: false as const,
  idempotencyScope: 'instance' as const,
  liveMinSamples: 200,
  liveRefreshMs: 1_000,
  originsRefreshMs: 30_000,
  originsTimeoutMs: 5_000,
});

/**
 * {@link DependencyOptions} after validation, every default applied: what the engine reads
 * ({@link EngineOptions}) and what the facade keeps (attempts and calibration, connections, lookup,
 * the pass-through fetch).
 */
export interface NormalizedDependencyOptions extends EngineOptions {
  latency: EngineOptions['latency'] & { connectP99Ms: number | undefined };
  attempts: number;
  connections: number;
  calibration: CalibrationOptions;
  lookup: LookupFunction | undefined;
  /** TLS options of the pools' connections, or undefined for Node's defaults. */
  tls: DependencyTlsOptions | undefined;
  http2: boolean;
  passThroughFetch: FetchFunction | undefined;
}

/**
 * Validates `options` and applies {@link DEPENDENCY_DEFAULTS}.
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeDependencyOptions(options: DependencyOptions): NormalizedDependencyOptions {
  objectOption('options', options);
  const { name } = options;
  if (typeof name !== 'string' || name.trim() === '')
    throw new InvalidOptionError('name', 'a non-empty string', name);
  const resolver = typeof options.origins === 'function' ? options.origins : undefined;
  const origins = resolver === undefined ? normalizeOrigins(options.origins) : [];
  const originsRefreshMs = positiveMs(
    'originsRefreshMs',
    options.originsRefreshMs ?? DEPENDENCY_DEFAULTS.originsRefreshMs,
  );
  const originsTimeoutMs = positiveMs(
    'originsTimeoutMs',
    options.originsTimeoutMs ?? DEPENDENCY_DEFAULTS.originsTimeoutMs,
  );
  const userDeadlineMs = positiveMs('userDeadlineMs', options.userDeadlineMs);
  const attempts = integerIn('attempts', options.attempts ?? DEPENDENCY_DEFAULTS.attempts, 1, 10);
  const connections = integerIn(
    'connections',
    options.connections ?? DEPENDENCY_DEFAULTS.connections,
    1,
    10_000,
  );
  const calibration = options.calibration ?? {};
  objectOption('calibration', calibration);
  const latency = normalizeLatency(options.latency, userDeadlineMs, attempts, calibration);
  const hedge = normalizeHedge(options.hedge ?? DEPENDENCY_DEFAULTS.hedge);
  const localMaxMs =
    options.localMaxMs === undefined ? userDeadlineMs : positiveMs('localMaxMs', options.localMaxMs);
  const liveMinSamples = integerIn(
    'liveMinSamples',
    options.liveMinSamples ?? DEPENDENCY_DEFAULTS.liveMinSamples,
    1,
    Number.POSITIVE_INFINITY,
    'an integer ≥ 1',
  );
  const liveRefreshMs = positiveMs(
    'liveRefreshMs',
    options.liveRefreshMs ?? DEPENDENCY_DEFAULTS.liveRefreshMs,
  );
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')
    throw new InvalidOptionError('clock', 'a Clock (now, setTimeout, clearTimeout)', clock);
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new InvalidOptionError('random', 'a function', random);
  const lookup = options.lookup;
  if (lookup !== undefined && typeof lookup !== 'function')
    throw new InvalidOptionError('lookup', 'a function like dns.lookup', lookup);
  const tls = normalizeTls(options.tls);
  const http2 = options.http2 ?? false;
  if (typeof http2 !== 'boolean') throw new InvalidOptionError('http2', 'a boolean', http2);
  const passThroughFetch = options.passThroughFetch;
  if (passThroughFetch !== undefined && typeof passThroughFetch !== 'function')
    throw new InvalidOptionError('passThroughFetch', 'a fetch function', passThroughFetch);
  const idempotencyKey = options.idempotencyKey ?? DEPENDENCY_DEFAULTS.idempotencyKey;
  if (idempotencyKey !== 'auto' && idempotencyKey !== false)
    throw new InvalidOptionError('idempotencyKey', "'auto' or false", idempotencyKey);
  const idempotencyScope = options.idempotencyScope ?? DEPENDENCY_DEFAULTS.idempotencyScope;
  if (idempotencyScope !== 'instance' && idempotencyScope !== 'fleet')
    throw new InvalidOptionError('idempotencyScope', "'instance' or 'fleet'", idempotencyScope);
  const fleetLatency = options.fleetLatency;
  if (fleetLatency !== undefined && typeof (fleetLatency as Partial<FleetLatencySource>)?.read !== 'function')
    throw new InvalidOptionError(
      'fleetLatency',
      'a fleet latency source (createFleetLatencyFeed())',
      fleetLatency,
    );
  const balancer = options.balancer ?? {};
  objectOption('balancer', balancer, 'an object of balancer options');
  if ((balancer as BalancerOptions).onTransition !== undefined)
    throw new InvalidOptionError(
      'balancer.onTransition',
      'absent: listen to the instance-* events of the dependency',
      (balancer as BalancerOptions).onTransition,
    );
  // Validated once, here: the engine builds its balancer from these as they are.
  const normalizedBalancer = normalizeBalancerOptions({
    ...(balancer as BalancerOptions),
    random: balancer.random ?? random,
  });
  const requeue = normalizeRequeueOptions(options.requeue);
  const concurrency = enabled('concurrency', options.concurrency ?? DEPENDENCY_DEFAULTS.concurrency);
  const throttle = enabled('throttle', options.throttle ?? DEPENDENCY_DEFAULTS.throttle);
  const lastAttempt = options.lastAttempt ?? DEPENDENCY_DEFAULTS.lastAttempt;
  if (lastAttempt !== 'read-timeout' && lastAttempt !== 'deadline')
    throw new InvalidOptionError('lastAttempt', "'read-timeout' or 'deadline'", lastAttempt);
  const retryBudget = options.retryBudget ?? {};
  objectOption('retryBudget', retryBudget, 'retry budget options or a RetryBudget');
  return {
    name,
    origins,
    resolver,
    originsRefreshMs,
    originsTimeoutMs,
    latency,
    userDeadlineMs,
    attempts,
    connections,
    retryBudget,
    hedge,
    calibration,
    localMaxMs,
    liveMinSamples,
    liveRefreshMs,
    fleetLatency,
    balancer: normalizedBalancer,
    requeue,
    concurrency: concurrency === false ? false : normalizeConcurrencyOptions(concurrency, 'concurrency.'),
    throttle: throttle === false ? false : normalizeAdaptiveThrottleOptions(throttle, 'throttle.'),
    lastAttempt,
    clock,
    random,
    lookup,
    tls,
    http2,
    passThroughFetch,
    idempotencyKey,
    idempotencyScope,
  };
}

function normalizeOrigins(origins: unknown): string[] {
  if (!Array.isArray(origins) || origins.length === 0)
    throw new InvalidOptionError(
      'origins',
      'a non-empty array of http(s) origins, or a resolver function',
      origins,
    );
  return origins.map((origin, i) => {
    const option = `origins[${i}]`;
    if (typeof origin !== 'string') throw new InvalidOptionError(option, 'an http(s) URL string', origin);
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new InvalidOptionError(option, 'an http(s) URL', origin);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InvalidOptionError(option, 'an http: or https: URL', origin);
    if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
      throw new InvalidOptionError(
        option,
        'an origin without path, query or fragment (scheme://host:port)',
        origin,
      );
    return url.origin;
  });
}

function normalizeLatency(
  latency: unknown,
  userDeadlineMs: number,
  attempts: number,
  calibration: CalibrationOptions,
): NormalizedDependencyOptions['latency'] {
  if (latency === 'auto') {
    // Without a start value, assume the slowest dependency whose requested attempts still fit.
    const slack = calibration.slack ?? CALIBRATION_DEFAULTS.slack;
    const overhead = calibration.overheadPerAttemptMs ?? CALIBRATION_DEFAULTS.overheadPerAttemptMs;
    const p99Ms = Math.max(1, Math.floor((userDeadlineMs / attempts - overhead) / slack));
    return { p99Ms, p95Ms: undefined, connectP99Ms: undefined, source: 'start' };
  }
  if (typeof latency !== 'object' || latency === null)
    throw new InvalidOptionError(
      'latency',
      "{ p99Ms, p95Ms? }, 'auto' or { auto: true, startP99Ms }",
      latency,
    );
  const record = latency as Record<string, unknown>;
  if (record['auto'] === true) {
    const p99Ms = positiveMs('latency.startP99Ms', record['startP99Ms']);
    const p95Ms =
      record['startP95Ms'] === undefined ? undefined : positiveMs('latency.startP95Ms', record['startP95Ms']);
    return { p99Ms, p95Ms, connectP99Ms: undefined, source: 'start' };
  }
  const p99Ms = positiveMs('latency.p99Ms', record['p99Ms']);
  const p95Ms = record['p95Ms'] === undefined ? undefined : positiveMs('latency.p95Ms', record['p95Ms']);
  if (p95Ms !== undefined && p95Ms > p99Ms)
    throw new InvalidOptionError('latency.p95Ms', `a number ≤ latency.p99Ms (${p99Ms})`, p95Ms);
  const connectP99Ms =
    record['connectP99Ms'] === undefined
      ? undefined
      : positiveMs('latency.connectP99Ms', record['connectP99Ms']);
  return { p99Ms, p95Ms, connectP99Ms, source: 'static' };
}

function normalizeHedge(hedge: unknown): NormalizedDependencyOptions['hedge'] {
  if (hedge === false) return false;
  if (typeof hedge !== 'object' || hedge === null)
    throw new InvalidOptionError('hedge', "false or { at: 'p95' | ms }", hedge);
  const { at, max } = hedge as { at?: unknown; max?: unknown };
  if (max !== undefined && max !== 1) throw new InvalidOptionError('hedge.max', '1', max);
  if (at === 'p95') return { at };
  return { at: positiveMs('hedge.at', at) };
}

/** `false`, or the options object of a protection that is on (`true` means its defaults). */
function enabled<T extends object>(option: string, value: T | boolean): T | false {
  if (value === false) return false;
  if (value === true) return {} as T;
  if (typeof value !== 'object' || value === null)
    throw new InvalidOptionError(option, 'true, false or an object of options', value);
  return value;
}

/** Validates `tls`: an object of the documented fields, each of its type; a copy. */
function normalizeTls(tls: unknown): DependencyTlsOptions | undefined {
  if (tls === undefined) return undefined;
  if (typeof tls !== 'object' || tls === null)
    throw new InvalidOptionError('tls', 'an object of TLS options', tls);
  const { ca, cert, key, servername, rejectUnauthorized, ...rest } = tls as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw new InvalidOptionError(
      `tls.${unknown}`,
      'absent (ca, cert, key, servername, rejectUnauthorized)',
      rest[unknown],
    );
  const pem = (v: unknown) => typeof v === 'string' || Buffer.isBuffer(v);
  const out: DependencyTlsOptions = {};
  if (ca !== undefined) {
    if (!(pem(ca) || (Array.isArray(ca) && ca.length > 0 && ca.every(pem))))
      throw new InvalidOptionError('tls.ca', 'PEM text or bytes, or a non-empty array of them', ca);
    out.ca = ca as NonNullable<DependencyTlsOptions['ca']>;
  }
  if (cert !== undefined) {
    if (!pem(cert)) throw new InvalidOptionError('tls.cert', 'PEM text or bytes', cert);
    out.cert = cert as string | Buffer;
  }
  if (key !== undefined) {
    if (!pem(key)) throw new InvalidOptionError('tls.key', 'PEM text or bytes', key);
    out.key = key as string | Buffer;
  }
  if ((cert === undefined) !== (key === undefined))
    throw new InvalidOptionError(
      cert === undefined ? 'tls.cert' : 'tls.key',
      'given with its pair (cert and key)',
      undefined,
    );
  if (servername !== undefined) {
    if (typeof servername !== 'string' || servername === '')
      throw new InvalidOptionError('tls.servername', 'a non-empty host name', servername);
    out.servername = servername;
  }
  if (rejectUnauthorized !== undefined) {
    if (typeof rejectUnauthorized !== 'boolean')
      throw new InvalidOptionError('tls.rejectUnauthorized', 'a boolean', rejectUnauthorized);
    out.rejectUnauthorized = rejectUnauthorized;
  }
  return out;
}
