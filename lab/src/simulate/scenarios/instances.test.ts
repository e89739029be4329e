import { describe, expect, it } from 'vitest';
import { formatSimulationJson, formatSimulationTable } from '../report.js';
import { type InstancesOptions, simulateInstances } from './instances.js';

const short: Partial<InstancesOptions> = { durationMs: 20_000 };

const byName = (options: Partial<InstancesOptions>) =>
  Object.fromEntries(simulateInstances(options).strategies.map((s) => [s.name, s]));

// Generous timeouts: the machine running the suite may be busy.
describe('simulateInstances', { timeout: 60_000 }, () => {
  it('keeps sick and slow instances to a sliver of the load where round-robin gives them their full share', () => {
    const { naive, prazo } = byName(short);
    expect(naive!.shareByKind.sick).toBeCloseTo(0.1, 2);
    expect(naive!.shareByKind.slow).toBeCloseTo(0.1, 2);
    expect(prazo!.shareByKind.sick).toBeLessThan(0.01);
    expect(prazo!.shareByKind.slow).toBeLessThan(0.02);
    expect(prazo!.success).toBeGreaterThanOrEqual(naive!.success);
    expect(prazo!.load).toBeLessThan(naive!.load);
    expect(prazo!.latencyMs.p99).toBeLessThan(naive!.latencyMs.p99 / 5);
    expect(prazo!.ejections).toBeGreaterThan(0);
  });

  it('serves 99 % with one of two instances always answering 503, where round-robin serves about 75 %', () => {
    const { naive, prazo } = byName({ ...short, instances: 2, sick: 1, slow: 0 });
    expect(naive!.success).toBeLessThan(0.8);
    expect(prazo!.success).toBeGreaterThanOrEqual(0.99);
    expect(prazo!.shareByKind.sick).toBeLessThanOrEqual(0.15);
  });

  it('keeps the sick and the slow instance of three, as in the drill, to a sliver of the load', () => {
    const { naive, prazo } = byName({ ...short, instances: 3, sick: 1, slow: 1 });
    expect(naive!.shareByKind.sick).toBeCloseTo(1 / 3, 2);
    expect(naive!.shareByKind.slow).toBeCloseTo(1 / 3, 2);
    expect(prazo!.shareByKind.sick).toBeLessThan(0.01);
    expect(prazo!.shareByKind.slow).toBeLessThan(0.02);
    expect(prazo!.success).toBeGreaterThan(naive!.success);
    expect(prazo!.perInstance).toHaveLength(3);
  });

  it('holds at 100 instances with 10 sick and 10 slow', () => {
    const { naive, prazo } = byName({ ...short, instances: 100, sick: 10, slow: 10, rps: 2_000 });
    expect(naive!.shareByKind.sick).toBeCloseTo(0.1, 2);
    expect(prazo!.shareByKind.sick).toBeLessThan(0.02);
    expect(prazo!.shareByKind.slow).toBeLessThan(0.03);
    expect(prazo!.success).toBeGreaterThanOrEqual(0.999);
  });

  it('stops sending to an instance that refuses connections', () => {
    const { naive, prazo } = byName({ ...short, instances: 3, sick: 0, slow: 0, refusing: 1 });
    expect(naive!.shareByKind.refusing).toBeCloseTo(1 / 3, 2);
    expect(prazo!.shareByKind.refusing).toBeLessThan(0.01);
    expect(prazo!.success).toBeGreaterThan(naive!.success);
  });

  it('accounts for every attempt in the per-instance load', () => {
    for (const s of simulateInstances({ ...short, durationMs: 5_000 }).strategies) {
      const total = s.perInstance.reduce((sum, p) => sum + p.attempts, 0);
      expect(total / s.userRequests).toBeCloseTo(s.load, 2);
      expect(s.perInstance.reduce((sum, p) => sum + p.share, 0)).toBeCloseTo(1, 2);
      expect(s.series.success).toHaveLength(5);
    }
  });

  it('gives identical JSON for the same seed, and a table naming every client', () => {
    const options = { durationMs: 5_000, seed: 9 };
    const result = simulateInstances(options);
    expect(formatSimulationJson(result)).toBe(formatSimulationJson(simulateInstances(options)));
    const table = formatSimulationTable(result);
    expect(table).toMatch(/round-robin, blind retries/);
    expect(table).toMatch(/prazo's balancer, budgeted retries/);
    expect(table).toMatch(/#0 sick/);
  });

  it('rejects an invalid option with an error that names it', () => {
    expect(() => simulateInstances({ instances: 3, sick: 4 })).toThrow(/`sick`/);
    expect(() => simulateInstances({ instances: 3, sick: 2, slow: 2 })).toThrow(/`slow`/);
    expect(() => simulateInstances({ sickErrorRate: 2 })).toThrow(/`sickErrorRate`/);
    expect(() => simulateInstances({ strategies: ['turbo' as never] })).toThrow(/`strategies`/);
  });
});
