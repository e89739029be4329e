import { describe, expect, it } from 'vitest';
import { formatSimulationJson } from '../report.js';
import { simulateTail, type TailOptions } from './tail.js';

// The default shape, compressed: 2 minutes, with pauses five times as frequent so that enough of
// them fall in the run.
const short: Partial<TailOptions> = { durationMs: 120_000, warmupMs: 5_000, pauseEveryMs: 1_000_000 };

// Generous timeouts: the machine running the suite may be busy.
describe('simulateTail', { timeout: 60_000 }, () => {
  it('cuts the fan-out p99.9 by 10× or more with at most 5 % extra requests when hedging at the live p95', () => {
    const result = simulateTail(short);
    const byName = Object.fromEntries(result.strategies.map((s) => [s.name, s]));
    expect(byName.none!.fanoutMs.p999).toBeGreaterThan(300);
    expect(byName.p95!.p999Cut).toBeGreaterThanOrEqual(10);
    expect(byName.p95!.extraLoad).toBeGreaterThan(0.01);
    expect(byName.p95!.extraLoad).toBeLessThanOrEqual(0.05);
    expect(byName.fixed!.extraLoad).toBeLessThan(byName.p95!.extraLoad);
    expect(byName.none!.extraLoad).toBe(0);
  });

  it('finishes every counted fan-out and reports the paper next to the simulation', () => {
    const result = simulateTail({ ...short, durationMs: 30_000 });
    for (const s of result.strategies) {
      expect(s.fanouts.unfinished).toBeLessThanOrEqual(2);
      expect(s.fanouts.counted).toBeGreaterThan(400);
      expect(s.subRequests).toBe(s.fanouts.counted * 100);
    }
    expect(result.paper).toMatchObject({
      p999WithoutHedgingMs: 1800,
      p999WithHedgingMs: 74,
      extraRequests: 0.02,
    });
  });

  it("spends prazo's real retry budget on hedges: a budget of zero refuses them beyond the floor", () => {
    const run = (budgetMaxRatio: number, budgetMinPerSecond: number) =>
      simulateTail({ ...short, durationMs: 30_000, budgetMaxRatio, budgetMinPerSecond, strategies: ['p95'] })
        .strategies[0]!;
    const open = run(0.1, 3);
    const closed = run(0, 0);
    expect(open.hedgesRefused).toBe(0);
    expect(closed.hedges).toBe(0);
    expect(closed.hedgesRefused).toBeGreaterThan(0);
  });

  it('gives identical JSON for the same seed', () => {
    const options = { ...short, durationMs: 20_000 };
    expect(formatSimulationJson(simulateTail({ ...options, seed: 5 }))).toBe(
      formatSimulationJson(simulateTail({ ...options, seed: 5 })),
    );
  });

  it('rejects an invalid option with an error that names it', () => {
    expect(() => simulateTail({ fanout: 0 })).toThrow(/`fanout`/);
    expect(() => simulateTail({ hedgePercentile: 100 })).toThrow(/`hedgePercentile`/);
  });
});
