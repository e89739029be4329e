import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import {
  classicFleet,
  type FakeAnswer,
  type FakeRequest,
  memoryApi,
  type ScriptedStep,
} from './fake-prometheus.test-helper.js';
import {
  createFleetLatencyFeed,
  type FleetLatencyErrorEvent,
  type FleetLatencyFeedOptions,
  type FleetLatencyStaleEvent,
  type FleetLatencyUpdateEvent,
} from './fleet-latency-feed.js';

const STEP = 30_000;
const START = 1_800_000_000_000;

/** Twenty healthy 30 s steps of 1000 calls: 99 % under 50 ms, 1 % between 50 and 75 ms. */
function steps(nowMs: number): ScriptedStep[] {
  const end = Math.floor(nowMs / STEP) * STEP;
  return Array.from({ length: 20 }, (_, i) => ({
    endMs: end - (19 - i) * STEP,
    buckets: { '0.03': 600, '0.05': 390, '0.075': 10, '+Inf': 0 },
  }));
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function setup(options: Partial<FleetLatencyFeedOptions> = {}) {
  const clock = createFakeClock(START);
  let answer: (req: FakeRequest) => FakeAnswer = (req) => classicFleet(steps(clock.now()))(req);
  let release: (() => void) | undefined;
  let holding = false;
  const api = memoryApi(
    (req) => answer(req),
    () => (holding ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
  );
  const feed = createFleetLatencyFeed({
    prometheus: api,
    query: { dependency: 'payments' },
    intervalMs: 10_000,
    clock,
    ...options,
  });
  const events = {
    update: [] as FleetLatencyUpdateEvent[],
    stale: [] as FleetLatencyStaleEvent[],
    error: [] as FleetLatencyErrorEvent[],
  };
  feed.on('update', (e) => events.update.push(e));
  feed.on('stale', (e) => events.stale.push(e));
  feed.on('error', (e) => events.error.push(e));
  return {
    clock,
    api,
    feed,
    events,
    down() {
      answer = () => ({ status: 503, body: 'Service Unavailable' });
    },
    up() {
      answer = (req) => classicFleet(steps(clock.now()))(req);
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      release?.();
    },
  };
}

describe('the fleet latency feed', () => {
  it('reads the fleet healthy p95 and p99 and emits update', async () => {
    const { feed, events, api, clock } = setup();
    expect(feed.read(clock.now())).toBeUndefined();
    const snapshot = await feed.refresh();
    expect(snapshot).toMatchObject({ samples: 20_000, readAtMs: START, stale: false });
    expect(snapshot!.p95Ms).toBeGreaterThan(30);
    expect(snapshot!.p95Ms).toBeLessThanOrEqual(50);
    expect(snapshot!.p99Ms).toBeGreaterThan(45);
    expect(snapshot!.p99Ms).toBeLessThanOrEqual(75);
    expect(events.update).toHaveLength(1);
    expect(feed.target).toBe('payments');
    const range = api.requests.find((r) => r.query.startsWith('sum by (le)'));
    expect(Number(range!.end) - Number(range!.start)).toBe(600 - 30);
  });

  it('keeps the last good figures through failed reads and reports staleness once', async () => {
    const { feed, events, clock, down, up } = setup({ staleAfterMs: 30_000 });
    const good = await feed.refresh();
    down();
    feed.start();
    for (let i = 0; i < 3; i++) {
      clock.advance(10_000);
      await flush();
    }
    expect(events.error.length).toBeGreaterThanOrEqual(2);
    expect(events.error[0]!.error.code).toBe('PROMETHEUS_HTTP_ERROR');
    expect(events.stale).toHaveLength(0);
    expect(feed.read(clock.now())).toEqual({ ...good, stale: false });
    clock.advance(10_000);
    await flush();
    clock.advance(10_000);
    await flush();
    expect(events.stale).toHaveLength(1);
    expect(events.stale[0]).toMatchObject({
      target: 'payments',
      snapshot: { p99Ms: good!.p99Ms, stale: true },
    });
    expect(events.stale[0]!.ageMs).toBeGreaterThan(30_000);
    expect(events.stale[0]!.error?.code).toBe('PROMETHEUS_HTTP_ERROR');
    expect(feed.read(clock.now())).toMatchObject({ p99Ms: good!.p99Ms, p95Ms: good!.p95Ms, stale: true });
    expect(feed.state()).toMatchObject({ stale: true, failures: events.error.length });

    up();
    clock.advance(10_000);
    await flush();
    expect(feed.read(clock.now())?.stale).toBe(false);
    expect(events.update).toHaveLength(2);
    feed.close();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('answers read() at once while Prometheus is slow, and never overlaps two reads', async () => {
    const { feed, clock, api, hold, release } = setup();
    await feed.refresh();
    hold();
    const before = api.requests.length;
    feed.start();
    clock.advance(10_000);
    clock.advance(10_000);
    clock.advance(10_000);
    await flush();
    // One read in flight (its first query), the ticks in between did not start others.
    expect(api.requests.length - before).toBe(1);
    expect(feed.read(clock.now())?.stale).toBe(false);
    release();
    await flush();
    feed.close();
  });

  it('cancels a read in flight and releases its timer on close', async () => {
    const { feed, clock, api, hold, events } = setup();
    hold();
    feed.start();
    await flush();
    expect(api.signals.at(-1)?.aborted).toBe(false);
    feed.close();
    expect(api.signals.at(-1)?.aborted).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    await flush();
    // The cancelled read is not reported as a failure.
    expect(events.error).toEqual([]);
    expect(events.stale).toEqual([]);
    expect(await feed.refresh()).toBeUndefined();
    feed.close();
  });

  it('reports staleness before any good read, with no figures to keep', async () => {
    const { feed, events, clock, down } = setup({ staleAfterMs: 20_000 });
    down();
    feed.start();
    for (let i = 0; i < 3; i++) {
      clock.advance(10_000);
      await flush();
    }
    expect(events.stale).toHaveLength(1);
    expect(events.stale[0]).toMatchObject({ ageMs: null, snapshot: undefined });
    expect(feed.state()).toMatchObject({ ageMs: null, stale: true });
    feed.close();
  });

  it('refuses to replace the figures with a read of too few healthy calls', async () => {
    const { feed, events } = setup({ minSamples: 1_000_000 });
    expect(await feed.refresh()).toBeUndefined();
    expect(events.error[0]!.error.code).toBe('PROMETHEUS_NO_DATA');
    expect(events.error[0]!.error.message).toMatch(/fewer than 1000000/);
  });

  it('survives a listener that throws', async () => {
    const { feed, events } = setup();
    feed.on('update', () => {
      throw new Error('listener bug');
    });
    await feed.refresh();
    expect(events.update).toHaveLength(1);
  });

  it.each([
    [{ intervalMs: 10 }, 'intervalMs'],
    [{ intervalMs: 10_000, staleAfterMs: 5_000 }, 'staleAfterMs'],
    [{ minSamples: 0 }, 'minSamples'],
    [{ query: { dependency: 'payments', stepMs: 10 } }, 'stepMs'],
    [{ prometheus: { url: 'nope' } }, 'url'],
  ])('refuses %j naming %s', (options, option) => {
    expect(() =>
      createFleetLatencyFeed({
        prometheus: { url: 'http://127.0.0.1:9090' },
        query: { dependency: 'payments' },
        ...(options as Partial<FleetLatencyFeedOptions>),
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option }));
  });
});
