import { describe, expect, it } from 'vitest';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { LatencyHistogram } from '../latency/histogram.js';
import {
  createDriftMonitor,
  type FleetDriftErrorEvent,
  type FleetDriftEvent,
} from '../observe/drift-monitor.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { classicFleet, memoryApi, type ScriptedStep } from './fake-prometheus.test-helper.js';
import { assessFleetDrift, checkFleetDrift, processTimeouts } from './fleet-drift.js';

const STEP = 30_000;
const NOW = 1_800_000_000_000;
/** Twenty healthy 30 s steps of 1000 calls, p99 near 50 ms. */
const steps: ScriptedStep[] = Array.from({ length: 20 }, (_, i) => ({
  endMs: NOW - (19 - i) * STEP,
  buckets: { '0.03': 600, '0.05': 390, '0.075': 10, '+Inf': 0 },
}));
/** Read timeouts (seconds) of three processes: one calibrated, one far too generous, one too tight. */
const TIMEOUTS = { '10.0.0.1:9100': 0.07, '10.0.0.2:9100': 2, '10.0.0.3:9100': 0.03 };

describe('fleet drift', () => {
  it('judges each process by the rule of the drift monitor', () => {
    const histogram = new LatencyHistogram();
    for (let i = 0; i < 1000; i++) histogram.record(i < 990 ? 40 : 60);
    const selection = { histogram, included: [], excluded: [] };
    const found = assessFleetDrift({
      processes: [
        { process: { instance: 'a' }, readMs: 56 },
        { process: { instance: 'b' }, readMs: 300 },
        { process: { instance: 'c' }, readMs: 40 },
      ],
      selection,
      slack: 1.4,
      tolerance: 0.2,
      minSamples: 100,
    });
    expect(found.map((p) => p.direction)).toEqual([undefined, 'timeout-too-generous', 'timeout-too-tight']);
    const thin = assessFleetDrift({
      processes: [{ process: { instance: 'a' }, readMs: 85 }],
      selection,
      slack: 1.4,
      tolerance: 0.2,
      minSamples: 10_000,
    });
    expect(thin[0]).toMatchObject({ direction: undefined, assessment: { status: 'insufficient' } });
  });

  it('names the processes whose timeout drifted from the fleet p99', async () => {
    const api = memoryApi(classicFleet(steps, TIMEOUTS));
    const report = await checkFleetDrift(api, {
      dependency: 'payments',
      slack: 1.4,
      tolerance: 0.2,
      minSamples: 100,
      nowMs: NOW,
    });
    expect(report.fleetP99Ms).toBeGreaterThan(45);
    expect(report.fleetP99Ms).toBeLessThanOrEqual(75);
    expect(report.recommendedMs).toBe(Math.ceil(report.fleetP99Ms! * 1.4));
    expect(report.processes.map((p) => [p.process['instance'], p.readMs, p.direction])).toEqual([
      ['10.0.0.1:9100', 70, undefined],
      ['10.0.0.2:9100', 2000, 'timeout-too-generous'],
      ['10.0.0.3:9100', 30, 'timeout-too-tight'],
    ]);
    expect(report.drifted).toHaveLength(2);
    expect(report.query).toBe(
      'max by (instance, job) (prazo_timeout_seconds{dependency="payments",phase="read"})',
    );
  });

  it('refuses a process timeout that is not a positive number', () => {
    expect(() =>
      processTimeouts([{ labels: { instance: 'a' }, atMs: 0, value: Number.NaN }], { url: 'u', query: 'q' }),
    ).toThrow(expect.objectContaining({ code: 'PROMETHEUS_BAD_RESPONSE' }));
  });
});

describe('the drift monitor with a fleet', () => {
  function setup(answer = classicFleet(steps, TIMEOUTS)) {
    const clock = createFakeClock(NOW);
    const dep = createEventSourceDouble('payments', {
      clock,
      policy: { connectMs: 70, readMs: 70, attempts: 2, warning: null },
    });
    const api = memoryApi(answer);
    const monitor = createDriftMonitor({
      dependencies: [dep],
      clock,
      fleet: { prometheus: api },
      intervalMs: 60_000,
    });
    const drift: FleetDriftEvent[] = [];
    const errors: FleetDriftErrorEvent[] = [];
    monitor.on('fleet-drift', (e) => drift.push(e));
    monitor.on('fleet-error', (e) => errors.push(e));
    return { clock, monitor, drift, errors, api };
  }

  it('emits fleet-drift for each drifted process', async () => {
    const { monitor, drift } = setup();
    const reports = await monitor.checkFleetNow();
    expect(reports).toHaveLength(1);
    expect(drift.map((e) => [e.process['instance'], e.direction, e.configuredMs])).toEqual([
      ['10.0.0.2:9100', 'timeout-too-generous', 2000],
      ['10.0.0.3:9100', 'timeout-too-tight', 30],
    ]);
    expect(drift[0]).toMatchObject({ dependency: 'payments', atMs: NOW });
    expect(drift[0]!.ratio).toBeCloseTo(2000 / drift[0]!.fleetP99Ms, 6);
  });

  it('checks the fleet at every interval once started, and stops with the monitor', async () => {
    const { clock, monitor, drift, api } = setup();
    monitor.start();
    clock.advance(60_000);
    await new Promise((resolve) => setImmediate(resolve));
    await monitor.checkFleetNow();
    expect(drift.length).toBeGreaterThanOrEqual(2);
    expect(api.requests.length).toBeGreaterThan(0);
    monitor.stop();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports a Prometheus that cannot answer as fleet-error, without throwing', async () => {
    const { monitor, errors, drift } = setup(() => ({ status: 502, body: 'Bad Gateway' }));
    await expect(monitor.checkFleetNow()).resolves.toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ dependency: 'payments', error: { code: 'PROMETHEUS_HTTP_ERROR' } });
    expect(drift).toEqual([]);
  });

  it('resolves to nothing without a fleet', async () => {
    const clock = createFakeClock(0);
    const monitor = createDriftMonitor({ dependencies: [createEventSourceDouble('x', { clock })], clock });
    await expect(monitor.checkFleetNow()).resolves.toEqual([]);
  });

  it('refuses a fleet option without a Prometheus', () => {
    expect(() => createDriftMonitor({ dependencies: [], fleet: {} as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option: 'fleet' }),
    );
    expect(() =>
      createDriftMonitor({
        dependencies: [],
        fleet: { prometheus: { url: 'http://127.0.0.1:9' }, match: 'job=x' },
      }),
    ).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringMatching(/^fleet\.match: /) }),
    );
  });
});
