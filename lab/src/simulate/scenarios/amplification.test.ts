import { describe, expect, it } from 'vitest';
import { formatSimulationJson } from '../report.js';
import { type AmplificationOptions, simulateAmplification } from './amplification.js';

// The default shape (80 % utilisation, half the capacity gone for a while), shorter: 40 s with the
// trigger from 10 s to 20 s.
const short: Partial<AmplificationOptions> = {
  durationMs: 40_000,
  triggerStartMs: 10_000,
  triggerDurationMs: 10_000,
  warmupMs: 5_000,
  sustainMs: 5_000,
};

// Generous timeouts: the machine running the suite may be busy.
describe('simulateAmplification', { timeout: 60_000 }, () => {
  it('ends every user request and every attempt exactly once (conservation)', () => {
    const result = simulateAmplification({ ...short, cancelAbandoned: true, triggerErrorRate: 0.2 });
    for (const s of result.strategies) {
      const r = s.requests;
      expect(r.success + r.failure + r.abandoned + r.inFlight, s.name).toBe(r.offered);
      expect(r.inFlight).toBeGreaterThanOrEqual(0);
      const a = s.attempts;
      expect(a.ok + a.error + a.rejected + a.timedOut + a.inFlight, s.name).toBe(a.sent);
      const d = s.dependency;
      expect(d.rejected + d.served + d.dropped + d.inSystem, s.name).toBe(d.arrived);
      expect(d.arrived).toBe(a.sent);
      expect(s.series.offered.reduce((x, y) => x + y, 0)).toBe(r.offered);
      expect(s.series.attempts.reduce((x, y) => x + y, 0)).toBe(a.sent);
      expect(Object.values(s.failures).reduce((x, y) => x + y, 0)).toBe(r.failure);
    }
  });

  it('gives identical JSON for the same seed, and different numbers for another seed', () => {
    const options = { ...short, strategies: ['naive', 'prazo'] as const };
    const a = formatSimulationJson(simulateAmplification({ ...options, seed: 11 }));
    const b = formatSimulationJson(simulateAmplification({ ...options, seed: 11 }));
    const c = formatSimulationJson(simulateAmplification({ ...options, seed: 12 }));
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it("multiplies the load with naive retries and holds it near 1.1× with prazo's 10 % budget, then only prazo recovers", () => {
    const result = simulateAmplification({ ...short, strategies: ['naive', 'prazo'] });
    const [naive, prazo] = result.strategies;
    expect(naive!.load.before).toBeCloseTo(1, 2);
    expect(naive!.load.trigger).toBeGreaterThanOrEqual(2.5);
    expect(naive!.recovery.recovered).toBe(false);
    expect(prazo!.load.trigger).toBeLessThanOrEqual(1.11);
    expect(prazo!.recovery.recovered).toBe(true);
    expect(prazo!.recovery.healthyBeforeTrigger).toBe(true);
  });

  it("uses prazo's real retry budget: a larger maxRatio lets more retries through", () => {
    const run = (budgetMaxRatio: number) =>
      simulateAmplification({ ...short, budgetMaxRatio, strategies: ['prazo'] }).strategies[0]!.load.trigger;
    const tight = run(0.1);
    const loose = run(0.3);
    expect(tight).toBeLessThanOrEqual(1.11);
    expect(loose).toBeGreaterThan(1.25);
    expect(loose).toBeLessThanOrEqual(1.31);
  });

  it("uses prazo's real calibration: the slack changes the per-attempt timeout (healthy p99 × slack, rounded up)", () => {
    const run = (slack: number) =>
      simulateAmplification({
        ...short,
        durationMs: 5_000,
        triggerStartMs: 0,
        triggerDurationMs: 0,
        slack,
        strategies: ['prazo'],
      });
    const low = run(1.3);
    const high = run(1.5);
    const p99 = low.dependency.healthyP99Ms;
    expect(low.strategies[0]!.settings.attemptTimeoutMs).toBe(Math.ceil(p99 * 1.3));
    expect(high.strategies[0]!.settings.attemptTimeoutMs).toBe(Math.ceil(p99 * 1.5));
  });

  it('lets prazo reduce its attempts to fit the user deadline, as calibrateTimeout says', () => {
    const result = simulateAmplification({
      ...short,
      durationMs: 5_000,
      triggerStartMs: 0,
      triggerDurationMs: 0,
      userDeadlineMs: 250,
      strategies: ['prazo'],
    });
    const settings = result.strategies[0]!.settings;
    expect(settings.attempts).toBeLessThan(3);
    expect(settings.calibrationWarning).toMatch(/250 ms deadline fits 1 attempt/);
  });

  it('calibrates prazo on every latency seen, and says so, when the warm-up has no healthy second', () => {
    const result = simulateAmplification({
      ...short,
      durationMs: 5_000,
      triggerStartMs: 0,
      triggerDurationMs: 0,
      rps: 3000,
      strategies: ['prazo'],
    });
    expect(result.dependency.calibratedOn).toBe('all-slices');
    expect(result.dependency.healthyP99Ms).toBeGreaterThan(100);
  });

  it('rejects an invalid option with an error that names it', () => {
    expect(() => simulateAmplification({ rps: -1 })).toThrow(/`rps`/);
    expect(() => simulateAmplification({ strategies: ['nope' as never] })).toThrow(/`strategies`/);
  });
});
