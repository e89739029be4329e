import { type Clock, systemClock, type Timer } from '../clock.js';
import {
  InvalidOptionError,
  type PrometheusError,
  PrometheusNoDataError,
  PrometheusUnavailableError,
} from '../errors.js';
import type { FleetLatencySnapshot, FleetLatencySource } from '../latency/fleet-latency-source.js';
import { integerIn, numberIn } from '../option-checks.js';
import { createPrometheusApi, type PrometheusApi, type PrometheusApiOptions } from './prometheus-api.js';
import {
  type FleetLatencyQuery,
  type NormalizedFleetLatencyQuery,
  normalizeFleetLatencyQuery,
  readFleetLatency,
} from './read-fleet-latency.js';

export type { FleetLatencySnapshot, FleetLatencySource } from '../latency/fleet-latency-source.js';

/** Options of {@link createFleetLatencyFeed}. */
export interface FleetLatencyFeedOptions {
  /** The Prometheus server: an API client, or the options of one (`{ url }`). */
  prometheus: PrometheusApi | PrometheusApiOptions;
  /**
   * What to read (`{ dependency: 'payments' }` or `{ metric, match }`); `rangeMs`, `stepMs` and the
   * health rule as for `prazo calibrate --prometheus`. @default rangeMs 600_000, stepMs 30_000
   */
  query: FleetLatencyQuery;
  /** Time between two reads, ms. @default 30_000 */
  intervalMs?: number;
  /** Age past which the last good figures are stale, ms. @default 3 × intervalMs */
  staleAfterMs?: number;
  /** Fewest healthy calls a read needs to replace the figures. @default 200 */
  minSamples?: number;
  /** Source of time and timers. @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link FleetLatencyFeedOptions}. */
export const FLEET_LATENCY_FEED_DEFAULTS = Object.freeze({
  rangeMs: 600_000,
  stepMs: 30_000,
  intervalMs: 30_000,
  minSamples: 200,
});

/** Payload of the feed's `update` event. */
export interface FleetLatencyUpdateEvent {
  /** The dependency or metric read. */
  target: string;
  snapshot: FleetLatencySnapshot;
  /** Steps excluded by the health rule in this read, each with its reason. */
  excluded: number;
}

/** Payload of the feed's `stale` event: no good read for `ageMs` (emitted once per stale spell). */
export interface FleetLatencyStaleEvent {
  target: string;
  /** Time since the last good read, ms (`null` when there never was one). */
  ageMs: number | null;
  /** The figures still in force. */
  snapshot: FleetLatencySnapshot | undefined;
  /** Why the last read failed. */
  error: PrometheusError | undefined;
  atMs: number;
}

/** Payload of the feed's `error` event: one read failed (the last good figures are kept). */
export interface FleetLatencyErrorEvent {
  target: string;
  error: PrometheusError;
  atMs: number;
}

/** Events of a {@link FleetLatencyFeed}. */
export interface FleetLatencyFeedEventMap {
  update: FleetLatencyUpdateEvent;
  stale: FleetLatencyStaleEvent;
  error: FleetLatencyErrorEvent;
}

/** The feed's state, for metrics and health checks. */
export interface FleetLatencyFeedState {
  target: string;
  /** Time since the last good read, ms; `null` before the first. */
  ageMs: number | null;
  stale: boolean;
  /** Reads that failed since the feed was created. */
  failures: number;
  lastError: PrometheusError | undefined;
}

/** A dependency's healthy p95/p99 kept fresh from Prometheus. */
export interface FleetLatencyFeed extends FleetLatencySource {
  /** What is read, for events and metrics (the dependency name, or the metric). */
  readonly target: string;
  /** Reads now (unless a read is already running, which is returned instead). Never rejects. */
  refresh(): Promise<FleetLatencySnapshot | undefined>;
  /** Reads now, then every `intervalMs`. Timers are unref'd. Idempotent. */
  start(): void;
  /** Stops the timer and cancels a read in flight; the last figures stay readable. Idempotent. */
  close(): void;
  state(): FleetLatencyFeedState;
  on<E extends keyof FleetLatencyFeedEventMap>(
    event: E,
    listener: (payload: FleetLatencyFeedEventMap[E]) => void,
  ): () => void;
  off<E extends keyof FleetLatencyFeedEventMap>(
    event: E,
    listener: (payload: FleetLatencyFeedEventMap[E]) => void,
  ): void;
}

interface NormalizedFeedOptions {
  api: PrometheusApi;
  query: NormalizedFleetLatencyQuery;
  intervalMs: number;
  staleAfterMs: number;
  minSamples: number;
  clock: Clock;
}

/**
 * Validates {@link FleetLatencyFeedOptions} and fills in the defaults.
 * @throws {InvalidOptionError} naming the option.
 */
export function normalizeFleetLatencyFeedOptions(options: FleetLatencyFeedOptions): NormalizedFeedOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object with `prometheus` and `query`', options);
  const p = options.prometheus as Partial<PrometheusApi> | undefined;
  const api =
    typeof p === 'object' && p !== null && typeof p.queryRange === 'function'
      ? (p as PrometheusApi)
      : createPrometheusApi(options.prometheus as PrometheusApiOptions);
  if (typeof options.query !== 'object' || options.query === null)
    throw new InvalidOptionError('query', 'an object with `dependency` or `metric`', options.query);
  const query = normalizeFleetLatencyQuery({
    ...options.query,
    rangeMs: options.query.rangeMs ?? FLEET_LATENCY_FEED_DEFAULTS.rangeMs,
    stepMs: options.query.stepMs ?? FLEET_LATENCY_FEED_DEFAULTS.stepMs,
  });
  const intervalMs = options.intervalMs ?? FLEET_LATENCY_FEED_DEFAULTS.intervalMs;
  numberIn(
    'intervalMs',
    intervalMs,
    { min: 100, max: 2_147_483_647 },
    'a number of ms from 100 to 2147483647',
  );
  const staleAfterMs = options.staleAfterMs ?? 3 * intervalMs;
  numberIn('staleAfterMs', staleAfterMs, { min: intervalMs }, `a number of ms ≥ intervalMs (${intervalMs})`);
  const minSamples = options.minSamples ?? FLEET_LATENCY_FEED_DEFAULTS.minSamples;
  integerIn('minSamples', minSamples, 1, Number.POSITIVE_INFINITY, 'an integer ≥ 1');
  const clock = options.clock ?? systemClock;
  if (typeof clock?.setTimeout !== 'function') throw new InvalidOptionError('clock', 'a Clock', clock);
  return { api, query, intervalMs, staleAfterMs, minSamples, clock };
}

/**
 * Creates a feed that reads a dependency's healthy p95/p99 over the whole fleet from Prometheus every
 * `intervalMs` (the steps judged by the same health rule as `prazo calibrate`). Give it to
 * `dependency({ fleetLatency })`: while its figures are fresh they drive the pre-call check and the
 * hedge delay; when they go stale the dependency's own window takes over, and without enough local
 * samples the last fleet figures stay — a Prometheus that is down never erases a good policy.
 *
 * Reads run in the background on an unref'd timer, never on the request path, and never overlap; a
 * slow Prometheus only makes the figures older. Failed reads emit `error`; the first check that finds
 * the figures older than `staleAfterMs` emits `stale` (once per spell); every good read emits `update`.
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const feed = createFleetLatencyFeed({ prometheus: { url: 'http://prometheus:9090' }, query: { dependency: 'payments' } });
 * const payments = dependency({ name: 'payments', origins, latency: { p99Ms: 180 }, userDeadlineMs: 1500, fleetLatency: feed });
 * feed.on('stale', (e) => log.warn(e, 'fleet latency is stale'));
 * feed.start();
 * // on shutdown
 * feed.close();
 */
export function createFleetLatencyFeed(options: FleetLatencyFeedOptions): FleetLatencyFeed {
  const o = normalizeFleetLatencyFeedOptions(options);
  const target = o.query.dependency ?? o.query.histogram.metric;
  const listeners: { [E in keyof FleetLatencyFeedEventMap]: Set<(p: FleetLatencyFeedEventMap[E]) => void> } =
    {
      update: new Set(),
      stale: new Set(),
      error: new Set(),
    };
  const emit = <E extends keyof FleetLatencyFeedEventMap>(
    event: E,
    payload: FleetLatencyFeedEventMap[E],
  ): void => {
    for (const listener of [...listeners[event]]) {
      try {
        listener(payload);
      } catch {
        // A listener's failure must not stop the feed.
      }
    }
  };

  let last: Omit<FleetLatencySnapshot, 'stale'> | undefined;
  let lastError: PrometheusError | undefined;
  let failures = 0;
  let staleReported = false;
  let running: Promise<FleetLatencySnapshot | undefined> | undefined;
  let controller: AbortController | undefined;
  let timer: Timer | undefined;
  let closed = false;
  const createdAtMs = o.clock.now();

  const isStale = (nowMs: number): boolean => nowMs - (last?.readAtMs ?? createdAtMs) > o.staleAfterMs;
  const snapshot = (nowMs: number): FleetLatencySnapshot | undefined =>
    last === undefined ? undefined : { ...last, stale: isStale(nowMs) };

  const checkStale = (nowMs: number): void => {
    if (!isStale(nowMs)) {
      staleReported = false;
      return;
    }
    if (staleReported) return;
    staleReported = true;
    emit('stale', {
      target,
      ageMs: last === undefined ? null : nowMs - last.readAtMs,
      snapshot: snapshot(nowMs),
      error: lastError,
      atMs: nowMs,
    });
  };

  const readOnce = async (): Promise<FleetLatencySnapshot | undefined> => {
    controller = new AbortController();
    const startedMs = o.clock.now();
    try {
      const report = await readFleetLatency(o.api, o.query, { signal: controller.signal, nowMs: startedMs });
      const { histogram } = report.selection;
      if (histogram.count < o.minSamples) {
        throw new PrometheusNoDataError(
          `the fleet's healthy steps hold ${histogram.count} calls, fewer than ${o.minSamples}: figures kept`,
          { url: o.api.url, query: report.queries.buckets },
        );
      }
      const [p95Ms = 0, p99Ms = 0] = histogram.percentiles([95, 99]);
      const nowMs = o.clock.now();
      last = { p95Ms: round(p95Ms), p99Ms: round(p99Ms), samples: histogram.count, readAtMs: nowMs };
      lastError = undefined;
      staleReported = false;
      emit('update', { target, snapshot: snapshot(nowMs)!, excluded: report.selection.excluded.length });
    } catch (error) {
      const nowMs = o.clock.now();
      failures++;
      lastError = toPrometheusError(error, o.api.url);
      // A read cancelled by close() is not news.
      if (!closed) {
        emit('error', { target, error: lastError, atMs: nowMs });
        checkStale(nowMs);
      }
    } finally {
      controller = undefined;
    }
    return snapshot(o.clock.now());
  };

  const tick = (): void => {
    timer = o.clock.setTimeout(tick, o.intervalMs);
    timer.unref();
    checkStale(o.clock.now());
    void feed.refresh();
  };

  const feed: FleetLatencyFeed = {
    target,
    read(nowMs) {
      return snapshot(nowMs);
    },
    refresh() {
      if (closed) return Promise.resolve(snapshot(o.clock.now()));
      if (running === undefined) {
        running = readOnce().finally(() => {
          running = undefined;
        });
      }
      return running;
    },
    start() {
      if (timer !== undefined || closed) return;
      timer = o.clock.setTimeout(tick, o.intervalMs);
      timer.unref();
      void feed.refresh();
    },
    close() {
      closed = true;
      if (timer !== undefined) o.clock.clearTimeout(timer);
      timer = undefined;
      controller?.abort();
    },
    state() {
      const nowMs = o.clock.now();
      return {
        target,
        ageMs: last === undefined ? null : nowMs - last.readAtMs,
        stale: isStale(nowMs),
        failures,
        lastError,
      };
    },
    on(event, listener) {
      listeners[event].add(listener);
      return () => {
        listeners[event].delete(listener);
      };
    },
    off(event, listener) {
      listeners[event].delete(listener);
    },
  };
  return feed;
}

function toPrometheusError(error: unknown, url: string): PrometheusError {
  if (error instanceof Error && 'code' in error && String(error.code).startsWith('PROMETHEUS_'))
    return error as PrometheusError;
  return new PrometheusUnavailableError(`reading Prometheus failed: ${String(error)}`, { url, cause: error });
}

// Two decimals, as the live window: below that a change is histogram noise.
function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
