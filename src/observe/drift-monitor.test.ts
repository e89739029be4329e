import { describe, expect, it } from 'vitest';
import { createEventSourceDouble, type EventSourceDouble } from '../../test/support/event-source-double.js';
import type { Clock, Timer } from '../clock.js';
import { isPrazoError } from '../errors.js';
import type { DriftEvent, DriftSkippedEvent, RecalibratedEvent } from '../latency/drift-check.js';
import { createFakeClock, type FakeClock } from '../testing/fake-clock.js';
import { createDriftMonitor, type DriftMonitor, type DriftMonitorOptions } from './drift-monitor.js';

const MINUTE = 60_000;

/** Drives `seconds` of traffic: 50 requests a second, latencies spread evenly over [0.5, 1] × `baseMs`. */
function traffic(
  clock: FakeClock,
  dep: EventSourceDouble,
  seconds: number,
  baseMs: number,
  errorShare = 0,
): void {
  const perSecond = 50;
  for (let s = 0; s < seconds; s++) {
    for (let i = 0; i < perSecond; i++) {
      const error = i < perSecond * errorShare;
      dep.window().record(error ? undefined : baseMs * (0.5 + (0.5 * i) / (perSecond - 1)), error);
    }
    clock.advance(1000);
  }
}

function setup(
  options: Partial<DriftMonitorOptions> = {},
  policy = { connectMs: 140, readMs: 140, attempts: 2 },
) {
  const clock = createFakeClock(0);
  const dep = createEventSourceDouble('payments', { clock, policy: { ...policy, warning: null } });
  const monitor = createDriftMonitor({ dependencies: [dep], clock, userDeadlineMs: 1500, ...options });
  const drift: DriftEvent[] = [];
  const recalibrated: RecalibratedEvent[] = [];
  const skipped: DriftSkippedEvent[] = [];
  monitor.on('drift', (e) => drift.push(e));
  monitor.on('recalibrated', (e) => recalibrated.push(e));
  monitor.on('skipped', (e) => skipped.push(e));
  return { clock, dep, monitor, drift, recalibrated, skipped };
}

describe('createDriftMonitor', () => {
  it('stays quiet while the read timeout matches the healthy p99 × slack', () => {
    const { clock, dep, monitor, drift } = setup();
    monitor.start();
    traffic(clock, dep, 180, 100); // p99 ≈ 100 ms, timeout 140 ms = p99 × 1.4
    expect(drift).toEqual([]);
    monitor.stop();
  });

  it('emits drift within two intervals of the latency doubling', () => {
    const { clock, dep, monitor, drift } = setup();
    monitor.start();
    traffic(clock, dep, 150, 100);
    const doubledAt = clock.now();
    traffic(clock, dep, 150, 200);
    monitor.stop();
    const first = drift[0];
    expect(first).toBeDefined();
    expect(first!.atMs - doubledAt).toBeLessThanOrEqual(2 * MINUTE);
    expect(first).toMatchObject({
      dependency: 'payments',
      configuredMs: 140,
      direction: 'timeout-too-tight',
    });
    expect(first!.measuredP99Ms).toBeGreaterThan(190);
    expect(first!.recommendedMs).toBe(Math.ceil(first!.measuredP99Ms * 1.4));
    expect(first!.ratio).toBeCloseTo(140 / first!.measuredP99Ms, 6);
    expect(first!.ratio).toBeLessThan(1);
  });

  it("only reports in 'alert' mode: the policy is never touched", () => {
    const { clock, dep, monitor, drift, recalibrated } = setup();
    monitor.start();
    traffic(clock, dep, 300, 200);
    monitor.stop();
    expect(drift.length).toBeGreaterThanOrEqual(4);
    expect(recalibrated).toEqual([]);
    expect(dep.policies).toEqual([]);
  });

  it('reports a timeout far above the healthy p99 as too generous', () => {
    const { clock, dep, monitor, drift } = setup({}, { connectMs: 400, readMs: 1000, attempts: 2 });
    traffic(clock, dep, 60, 100);
    monitor.checkNow();
    expect(drift[0]?.direction).toBe('timeout-too-generous');
  });

  it("'auto' follows the healthy p99 up in bounded steps and stops at the recommendation", () => {
    const { clock, dep, monitor, recalibrated } = setup({ mode: 'auto' });
    monitor.start();
    traffic(clock, dep, 60, 100);
    traffic(clock, dep, 8 * 60, 200);
    monitor.stop();
    const reads = [140, ...recalibrated.map((e) => e.next.readMs)];
    expect(reads.length).toBeGreaterThanOrEqual(4); // 140 → 175 → 218 → 272 → ~279
    for (let i = 1; i < reads.length; i++) {
      expect(reads[i]!).toBeGreaterThan(reads[i - 1]!);
      expect(reads[i]! / reads[i - 1]!).toBeLessThanOrEqual(1.25 + 1e-9);
    }
    const last = recalibrated.at(-1)!;
    expect(last.bounded).toBe(false);
    expect(last.next.readMs).toBe(last.targetMs);
    expect(dep.policy().readMs).toBe(last.targetMs);
    expect(last.targetMs).toBeGreaterThan(270);
    expect(last.targetMs).toBeLessThan(285);
  });

  it("'auto' follows the healthy p99 down in bounded steps", () => {
    const { clock, dep, monitor, recalibrated } = setup(
      { mode: 'auto' },
      { connectMs: 400, readMs: 560, attempts: 2 },
    );
    monitor.start();
    traffic(clock, dep, 10 * 60, 100);
    monitor.stop();
    const reads = [560, ...recalibrated.map((e) => e.next.readMs)];
    for (let i = 1; i < reads.length; i++) expect(reads[i - 1]! / reads[i]!).toBeLessThanOrEqual(1.25 + 0.01);
    expect(dep.policy().readMs).toBe(recalibrated.at(-1)!.targetMs);
    expect(dep.policy().readMs).toBeLessThan(145);
    // The connect timeout is kept, but never above the read timeout.
    expect(dep.policy().connectMs).toBe(dep.policy().readMs);
  });

  it('a degraded slice never raises the timeout', () => {
    const { clock, dep, monitor, recalibrated, drift } = setup({ mode: 'auto' });
    monitor.start();
    traffic(clock, dep, 50, 100);
    traffic(clock, dep, 10, 600); // one slow slice: excluded as a p99 outlier
    traffic(clock, dep, 60, 100);
    traffic(clock, dep, 10, 150, 0.2); // one failing slice: excluded for its error rate
    traffic(clock, dep, 50, 100);
    monitor.stop();
    expect(drift).toEqual([]);
    expect(recalibrated).toEqual([]);
    expect(dep.policy().readMs).toBe(140);
  });

  it('a window with degraded slices may not raise the timeout even when the healthy p99 asks for it', () => {
    const { clock, dep, monitor, recalibrated, skipped, drift } = setup({ mode: 'auto' });
    traffic(clock, dep, 20, 200);
    traffic(clock, dep, 10, 200, 0.2); // a failing slice in the window
    traffic(clock, dep, 30, 200);
    monitor.checkNow();
    expect(drift).toHaveLength(1);
    expect(recalibrated).toEqual([]);
    expect(skipped.map((s) => s.reason)).toEqual(['degraded-window']);
    expect(dep.policy().readMs).toBe(140);
  });

  it('recomputes attempts against the user deadline and restores them when latency falls back', () => {
    const { clock, dep, monitor, recalibrated } = setup(
      { mode: 'auto', userDeadlineMs: 600 },
      { connectMs: 252, readMs: 252, attempts: 2 },
    );
    monitor.start();
    traffic(clock, dep, 5 * 60, 250); // p99 ≈ 250 → read 350: 600 ms fits 1 attempt of 350 + 30
    const raised = dep.policy();
    expect(raised.readMs).toBeGreaterThan(340);
    expect(raised.attempts).toBe(1);
    expect(raised.warning?.code).toBe('ATTEMPTS_REDUCED');
    traffic(clock, dep, 8 * 60, 180); // back to p99 ≈ 180 → read 252: 2 attempts fit again
    monitor.stop();
    expect(dep.policy()).toMatchObject({ attempts: 2, warning: null });
    expect(
      recalibrated.every((e) => e.next.attempts === dep.policies[recalibrated.indexOf(e)]?.attempts),
    ).toBe(true);
  });

  it('never raises the timeout beyond what one attempt in the user deadline allows', () => {
    const { clock, dep, monitor, recalibrated, skipped } = setup({ mode: 'auto', userDeadlineMs: 200 });
    monitor.start();
    traffic(clock, dep, 6 * 60, 200);
    monitor.stop();
    expect(dep.policy().readMs).toBe(170); // 200 ms deadline − 30 ms overhead
    expect(recalibrated.at(-1)?.cappedByDeadline).toBe(true);
    expect(dep.policy().attempts).toBe(1);
    monitor.checkNow();
    expect(skipped.at(-1)?.reason).toBe('deadline-cap');
  });

  it('skips a dependency whose healthy slices hold too few samples', () => {
    const { clock, dep, monitor, drift, skipped } = setup({ minSamples: 5000 });
    traffic(clock, dep, 60, 300);
    const [result] = monitor.checkNow();
    expect(result?.skipped).toBe('too-few-samples');
    expect(skipped[0]).toMatchObject({ dependency: 'payments', reason: 'too-few-samples' });
    expect(drift).toEqual([]);
  });

  it('arms one unref’d timer, and stop() releases it', () => {
    const clock = createFakeClock(0);
    let unrefs = 0;
    const spy: Clock = {
      now: clock.now,
      setTimeout(cb, ms) {
        const t = clock.setTimeout(cb, ms);
        return {
          unref: () => {
            unrefs++;
            return t.unref();
          },
          inner: t,
        } as Timer;
      },
      clearTimeout: (t) => clock.clearTimeout((t as unknown as { inner: Timer }).inner),
    };
    const monitor: DriftMonitor = createDriftMonitor({ dependencies: [], clock: spy });
    monitor.start();
    monitor.start();
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(3 * MINUTE);
    expect(clock.pendingTimers()).toBe(1);
    expect(unrefs).toBe(4);
    expect(monitor.running).toBe(true);
    monitor.stop();
    monitor.stop();
    expect(clock.pendingTimers()).toBe(0);
    expect(monitor.running).toBe(false);
  });

  it('keeps checking after a listener throws', () => {
    const { clock, dep, monitor, drift } = setup();
    let thrown = false;
    monitor.on('drift', () => {
      if (thrown) return;
      thrown = true;
      throw new Error('listener bug');
    });
    monitor.start();
    traffic(clock, dep, 59, 200);
    expect(() => clock.advance(1000)).toThrow('listener bug');
    traffic(clock, dep, 60, 200);
    expect(drift).toHaveLength(2);
    monitor.stop();
  });

  it('on() returns an unsubscribe function', () => {
    const { clock, dep, monitor } = setup();
    const seen: DriftEvent[] = [];
    const off = monitor.on('drift', (e) => seen.push(e));
    traffic(clock, dep, 60, 200);
    off();
    monitor.checkNow();
    expect(seen).toEqual([]);
  });

  it('rejects invalid options with a typed error naming the option', () => {
    const dep = createEventSourceDouble('payments');
    const cases: Array<[Partial<DriftMonitorOptions>, string]> = [
      [{ intervalMs: 0 }, 'intervalMs'],
      [{ mode: 'fix' as never }, 'mode'],
      [{ slack: 1 }, 'slack'],
      [{ tolerance: 1 }, 'tolerance'],
      [{ maxStepRatio: 1 }, 'maxStepRatio'],
      [{ minSamples: 0.5 }, 'minSamples'],
      [{ userDeadlineMs: -1 }, 'userDeadlineMs'],
      [{ userDeadlineMs: { payments: Number.NaN } }, 'userDeadlineMs.payments'],
      [{ dependencies: 3 as never }, 'dependencies'],
    ];
    for (const [options, option] of cases) {
      let caught: unknown;
      try {
        createDriftMonitor({ dependencies: [dep], ...options });
      } catch (error) {
        caught = error;
      }
      expect(isPrazoError(caught, 'INVALID_OPTION'), option).toBe(true);
      expect((caught as { option: string }).option).toBe(option);
    }
  });

  it("'auto' mode needs setPolicy() and a user deadline for every dependency", () => {
    const dep = createEventSourceDouble('payments');
    const { setPolicy: _, ...readOnly } = dep;
    expect(() =>
      createDriftMonitor({ dependencies: [readOnly], mode: 'auto', userDeadlineMs: 1000 }),
    ).toThrow(/setPolicy/);
    expect(() => createDriftMonitor({ dependencies: [dep], mode: 'auto' })).toThrow(
      /userDeadlineMs\.payments/,
    );
    expect(() =>
      createDriftMonitor({ dependencies: [dep], mode: 'auto', userDeadlineMs: { payments: 1000 } }),
    ).not.toThrow();
  });
});
