import { InvalidOptionError } from '../errors.js';

/**
 * What the metrics adapters read from a fleet latency feed (`createFleetLatencyFeed()`): the target it
 * reads for (the `dependency` label) and its state at collection time.
 */
export interface FleetFeedView {
  readonly target: string;
  state(): { ageMs: number | null; stale: boolean };
}

/** One feed's gauges, as both adapters publish them. */
export interface FleetFeedReading {
  dependency: string;
  /** Seconds since the last good read; `undefined` before the first (no series rather than a 0). */
  ageSeconds: number | undefined;
  /** 1 when stale, else 0. */
  stale: 0 | 1;
}

/**
 * Flattens the `fleetLatency` option of `instrument()`: one feed or several.
 * @throws {InvalidOptionError} when an item is not a feed.
 */
export function toFleetFeeds(value: FleetFeedView | Iterable<FleetFeedView> | undefined): FleetFeedView[] {
  if (value === undefined) return [];
  const list = isFeed(value)
    ? [value]
    : Symbol.iterator in Object(value)
      ? [...(value as Iterable<unknown>)]
      : [value];
  list.forEach((item, i) => {
    if (!isFeed(item)) throw new InvalidOptionError(`fleetLatency[${i}]`, 'a fleet latency feed', item);
  });
  return list as FleetFeedView[];
}

/** Reads every feed's gauges now. */
export function readFleetFeeds(feeds: readonly FleetFeedView[]): FleetFeedReading[] {
  return feeds.map((feed) => {
    const { ageMs, stale } = feed.state();
    return {
      dependency: feed.target,
      ageSeconds: ageMs === null ? undefined : ageMs / 1000,
      stale: stale ? 1 : 0,
    };
  });
}

function isFeed(value: unknown): value is FleetFeedView {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as FleetFeedView).target === 'string' &&
    typeof (value as FleetFeedView).state === 'function'
  );
}
