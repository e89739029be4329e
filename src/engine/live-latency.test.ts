import { describe, expect, it } from 'vitest';
import { normalizeDependencyOptions } from '../client/options.js';
import type { FleetLatencySnapshot, FleetLatencySource } from '../latency/fleet-latency-source.js';
import { createSlicedWindow } from '../latency/sliced-window.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { LiveLatency } from './live-latency.js';

function setup(fleet: FleetLatencySource | undefined, minSamples = 100) {
  const clock = createFakeClock(0);
  const window = createSlicedWindow({ clock });
  let changes = 0;
  const live = new LiveLatency({
    window,
    p99Ms: 500,
    p95Ms: 400,
    source: 'static',
    minSamples,
    refreshMs: 1000,
    onChange: () => changes++,
    fleet,
  });
  /** `n` local attempts spread over [10, 20] ms, one slice's worth of time. */
  const local = (n: number) => {
    for (let i = 0; i < n; i++) window.record(10 + (10 * i) / n, false);
    clock.advance(10_000);
  };
  return { clock, live, local, changes: () => changes };
}

function source(snapshot: () => FleetLatencySnapshot | undefined): FleetLatencySource {
  return { read: () => snapshot() };
}

const FLEET: FleetLatencySnapshot = { p95Ms: 60, p99Ms: 90, samples: 5000, readAtMs: 0, stale: false };

describe('LiveLatency with a fleet source', () => {
  it('prefers fresh fleet figures to the local window', () => {
    const { live, local, clock, changes } = setup(source(() => FLEET));
    local(300);
    expect(live.refresh(clock.now())).toBe(true);
    expect([live.p95Ms, live.p99Ms, live.p99Source, live.p95Source]).toEqual([60, 90, 'fleet', 'fleet']);
    expect(changes()).toBe(1);
  });

  it('falls back to the local window when the fleet figures are stale', () => {
    const { live, local, clock } = setup(source(() => ({ ...FLEET, stale: true })));
    local(300);
    live.refresh(clock.now());
    expect(live.p99Source).toBe('live');
    expect(live.p99Ms).toBeLessThanOrEqual(20);
  });

  it('keeps stale fleet figures rather than going back to the starting ones', () => {
    const { live, clock } = setup(source(() => ({ ...FLEET, stale: true })));
    live.refresh(clock.now());
    expect([live.p99Ms, live.p99Source]).toEqual([90, 'fleet']);
  });

  it('uses the starting figures before the fleet has any', () => {
    const { live, clock } = setup(source(() => undefined));
    live.refresh(clock.now());
    expect([live.p95Ms, live.p99Ms, live.p99Source]).toEqual([400, 500, 'static']);
  });

  it('ignores a source that throws or returns nonsense (the request path must not fail)', () => {
    for (const bad of [
      source(() => {
        throw new Error('broken source');
      }),
      source(() => ({ ...FLEET, p99Ms: Number.NaN })),
      source(() => ({ ...FLEET, p95Ms: 0 })),
    ]) {
      const { live, clock } = setup(bad);
      expect(() => live.refresh(clock.now())).not.toThrow();
      expect(live.p99Source).toBe('static');
    }
  });
});

describe('the fleetLatency option', () => {
  const base = {
    name: 'payments',
    origins: ['http://127.0.0.1:1'],
    latency: { p99Ms: 100 },
    userDeadlineMs: 1000,
  };

  it('is taken when it can be read', () => {
    const fleetLatency = source(() => FLEET);
    expect(normalizeDependencyOptions({ ...base, fleetLatency }).fleetLatency).toBe(fleetLatency);
  });

  it.each([[{}], ['feed'], [{ read: 1 }]])('refuses %j naming the option', (fleetLatency) => {
    expect(() => normalizeDependencyOptions({ ...base, fleetLatency } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option: 'fleetLatency' }),
    );
  });
});
