import { isPrazoError } from 'prazo';
import { describe, expect, it } from 'vitest';
import { formatSimulationJson, formatSimulationTable } from '../report.js';
import { normalizeOverloadOptions, type OverloadOptions, simulateOverload } from './overload.js';

// 2 instances × 8 workers × 20 ms: 800 rps of capacity, offered 2 400 rps for 10 s of virtual time.
const small: Partial<OverloadOptions> = { instances: 2, clients: 4, durationMs: 10_000, warmupMs: 4_000 };

const byName = (options: Partial<OverloadOptions>) =>
  Object.fromEntries(simulateOverload(options).configs.map((c) => [c.name, c]));

// Generous timeouts: the machine running the suite may be busy.
describe('simulateOverload', { timeout: 60_000 }, () => {
  it('keeps prazo-protected at ≥ 80 % of capacity in goodput while naive falls below 20 %', () => {
    const { naive, prazo, protected: guarded } = byName(small);
    expect(guarded!.goodputShare).toBeGreaterThanOrEqual(0.8);
    expect(naive!.goodputShare).toBeLessThan(0.2);
    expect(prazo!.goodputShare).toBeLessThanOrEqual(guarded!.goodputShare);
    // The requests the protected supplier runs wait little; the blind FIFO makes them wait seconds.
    expect(guarded!.admittedLatencyMs.p99).toBeLessThan(10 * small.instances! * 20);
    expect(naive!.admittedLatencyMs.p50).toBeGreaterThan(o().userDeadlineMs);
    // Naive's supplier works flat out for callers who are gone; the protected one hardly ever.
    expect(naive!.supplier.servedForNobody / naive!.supplier.served).toBeGreaterThan(0.9);
    // (< 5 % while the throttle counted its own rejections and so sent 2× what was accepted; it now
    // sends ≈ √(2 × 3) ≈ 2.4×, and the admission sheds the difference.)
    expect(guarded!.supplier.servedForNobody / guarded!.supplier.served).toBeLessThan(0.08);
    expect(guarded!.clientRefused.concurrency + guarded!.clientRefused.throttle).toBeGreaterThan(0);
    expect(prazo!.amplification).toBeLessThanOrEqual(1 + 0.1 + 0.02);
  });

  it("never answers a protected client after its user's deadline, whose clock runs while the call waits for a slot", () => {
    const { protected: guarded } = byName({ ...small, configs: ['protected'] });
    expect(guarded!.clientRefused.concurrency).toBeGreaterThan(0);
    expect(guarded!.requests.late).toBe(0);
    expect(guarded!.userLatencyMs.p99).toBeLessThanOrEqual(o().userDeadlineMs);
  });

  it('holds the same shape at 10 instances and 20 clients', () => {
    const { naive, protected: guarded } = byName({
      ...small,
      instances: 10,
      clients: 20,
      durationMs: 8_000,
      configs: ['naive', 'protected'],
    });
    expect(guarded!.goodputShare).toBeGreaterThanOrEqual(0.8);
    expect(naive!.goodputShare).toBeLessThan(0.2);
  });

  it('gives every configuration the goodput it measured, never more than the capacity allows', () => {
    const result = simulateOverload({ ...small, factor: 0.5 });
    for (const c of result.configs) {
      // Under capacity every configuration serves nearly everyone in time.
      expect(c.successShare).toBeGreaterThan(0.95);
      expect(c.goodputRps).toBeLessThanOrEqual(result.supplier.capacityRps * 0.55);
      expect(c.requests.inTime + c.requests.failed + c.requests.late + c.requests.inFlight).toBe(
        c.requests.offered,
      );
    }
  });

  it('replays the same run for the same seed, and prints it as a table', () => {
    const options = { ...small, durationMs: 6_000, configs: ['protected' as const] };
    const first = simulateOverload(options);
    expect(formatSimulationJson(simulateOverload(options))).toBe(formatSimulationJson(first));
    expect(formatSimulationTable(first)).toMatch(/prazo-protected\s+\d+ rps\s+\d+\.\d %/);
  });

  it.each([
    ['instances', 0],
    ['workers', 1.5],
    ['serviceMs', -1],
    ['factor', 0],
    ['factor', 1_000],
    ['userDeadlineMs', Number.NaN],
    ['clients', 0],
    ['warmupMs', 60_000],
    ['configs', ['naive', 'turbo']],
    ['configs', []],
  ])('rejects %s = %j with an InvalidOptionError naming it', (key, value) => {
    let caught: unknown;
    try {
      normalizeOverloadOptions({ [key]: value } as Partial<OverloadOptions>);
    } catch (error) {
      caught = error;
    }
    expect(isPrazoError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { option: string }).option).toBe(key);
  });
});

function o(): OverloadOptions {
  return normalizeOverloadOptions(small);
}
