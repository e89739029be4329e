import { describe, expect, it } from 'vitest';
import { normalizeDrillOptions } from './drill-options.js';
import {
  burstPlateauStartMs,
  burstRampStartMs,
  countsInPhase,
  fleetInstanceLabels,
  phaseAt,
  planPhases,
  SUPPLIER_INSTANCES,
  supplierBehaviour,
  supplierService,
  TRIGGER_START_MS,
  triggerWindow,
} from './phase-plan.js';
import { supplierHost } from './services/set.js';

describe('the drill phases', () => {
  const options = normalizeDrillOptions({ quick: true });
  const phases = planPhases(options.phases);

  it('lay warm-up, tail, trigger, fleet, degradation, burst and recovery end to end in about 38 s with --quick', () => {
    // The slow tail comes while the rest is healthy: hedges are paid from the retry budget, which an
    // error burst just before would have spent (docs/drill.md).
    expect(phases.map((p) => p.name)).toEqual([
      'warmup',
      'tail',
      'trigger',
      'fleet',
      'degrade',
      'burst',
      'recovery',
    ]);
    for (let i = 1; i < phases.length; i++) expect(phases[i]!.startMs).toBe(phases[i - 1]!.endMs);
    expect(phases[phases.length - 1]!.endMs).toBeGreaterThanOrEqual(32_000);
    expect(phases[phases.length - 1]!.endMs).toBeLessThanOrEqual(40_000);
    expect(normalizeDrillOptions().phases.recoveryMs).toBeGreaterThan(options.phases.recoveryMs);
  });

  it('find the phase an instant falls in, the last one past the end', () => {
    expect(phaseAt(phases, 0).name).toBe('warmup');
    expect(phaseAt(phases, phases[1]!.startMs).name).toBe('tail');
    expect(phaseAt(phases, phases[2]!.startMs).name).toBe('trigger');
    expect(phaseAt(phases, 10 ** 9).name).toBe('recovery');
  });

  it('size the supplier so that the healthy checkouts keep each instance at the stated utilisation', () => {
    const service = supplierService(options);
    // 50 checkouts/s over 3 instances, 2 workers at 60 %: a mean service time of 72 ms.
    expect(service.offeredRps).toBeCloseTo(50 / 3, 9);
    expect(service.meanMs).toBeCloseTo(72, 9);
    expect(service.offeredRps / service.capacityRps).toBeCloseTo(0.6, 9);
    // The article's shape: p99 / median = 180 / 40.
    expect(service.p99Ms / service.medianMs).toBeCloseTo(4.5, 9);
    expect(supplierService({ ...options, utilization: 0.3 }).meanMs).toBeCloseTo(36, 9);
    expect(supplierBehaviour('warmup', 0, 0, options)).toEqual({
      latency: { type: 'lognormal', medianMs: 58.4, p99Ms: 262.9 },
    });
  });

  it('triple the service time during the trigger’s capacity drop only', () => {
    const trigger = phases.find((p) => p.name === 'trigger')!;
    const length = trigger.endMs - trigger.startMs;
    const at = (ms: number) => supplierBehaviour('trigger', 1, ms / length, options);
    const healthy = supplierBehaviour('warmup', 1, 0, options);
    expect(at(500)).toEqual(healthy);
    expect(at(TRIGGER_START_MS + 100)).toEqual({
      latency: { type: 'lognormal', medianMs: 175.3, p99Ms: 788.7 },
    });
    expect(at(TRIGGER_START_MS + options.triggerDropMs + 100)).toEqual(healthy);
    expect(triggerWindow(trigger, options)).toEqual({
      startMs: trigger.startMs + TRIGGER_START_MS,
      endMs: trigger.startMs + TRIGGER_START_MS + options.triggerDropMs,
    });
  });

  it('degrade the supplier to answer at the naive timeout, as the article’s load-test double does', () => {
    expect(supplierBehaviour('degrade', 0, 0.5, options)).toEqual({ answerAtMs: options.naiveTimeoutMs });
  });

  it('ramp the 503 share up after the supplier returns, then hold it at its height', () => {
    const burst = phases.find((p) => p.name === 'burst')!;
    const share = (progress: number) => {
      return supplierBehaviour('burst', 0, progress, options).statuses?.[0]?.share;
    };
    expect(share(0)).toBe(0);
    expect(share(0.2)).toBeGreaterThan(0);
    expect(share(0.2)).toBeLessThan(options.burstShare);
    expect(share(0.9)).toBeCloseTo(options.burstShare);
    expect(burstRampStartMs(burst)).toBeGreaterThan(burst.startMs);
    expect(burstPlateauStartMs(burst)).toBeGreaterThan(burstRampStartMs(burst));
    expect(burstPlateauStartMs(burst)).toBeLessThan(burst.endMs);
  });

  it('make one instance of three sick and one slow in the fleet phase, for a few seconds with --quick', () => {
    const fleet = phases.find((p) => p.name === 'fleet')!;
    expect(fleet.startMs).toBe(options.phases.warmupMs + options.phases.tailMs + options.phases.triggerMs);
    expect(fleet.endMs - fleet.startMs).toBeLessThanOrEqual(6_000);
    expect(SUPPLIER_INSTANCES).toBe(3);
    expect(supplierBehaviour('fleet', 0, 0.5, options)).toMatchObject({
      statuses: [{ status: 503, share: 1 }],
    });
    // Farther away, not busier: 150 ms on the wire, the same service time.
    expect(supplierBehaviour('fleet', 1, 0.5, options)).toEqual({
      ...supplierBehaviour('warmup', 1, 0, options),
      wireDelayMs: 150,
    });
    expect(supplierBehaviour('fleet', 2, 0.5, options)).toEqual(supplierBehaviour('warmup', 2, 0, options));
    expect(fleetInstanceLabels(options)).toEqual(['#0 sick (503)', '#1 slow (+150 ms)', '#2 healthy']);
    expect(supplierHost(0)).toBe('127.0.0.1');
    expect(supplierHost(2)).toBe('127.0.0.3');
  });

  it('slow down every instance alike in the tail phase, so that balancing cannot route around it', () => {
    for (const instance of [0, 1, 2]) {
      // A few calls wait on I/O, holding no worker: the service time, and so the capacity, stay healthy.
      expect(supplierBehaviour('tail', instance, 0, options)).toEqual({
        latency: supplierBehaviour('warmup', instance, 0, options).latency,
        ioWait: { share: options.tailShare, ms: options.tailMs },
      });
    }
  });

  it('refuse a phase length out of range, naming it', () => {
    expect(() => normalizeDrillOptions({ phases: { burstMs: 10 } })).toThrow(/phases\.burstMs/);
    expect(() => normalizeDrillOptions({ rps: 0 })).toThrow(/rps/);
    expect(() => normalizeDrillOptions({ utilization: 1 })).toThrow(/utilization/);
    expect(() => normalizeDrillOptions({ triggerDropMs: 20_000 })).toThrow(/triggerDropMs/);
    expect(() => normalizeDrillOptions({ phases: { triggerMs: 1_000 } })).toThrow(/phases\.triggerMs/);
    // A short trigger phase shortens the default drop to fit.
    expect(normalizeDrillOptions({ phases: { triggerMs: 1_500 } }).triggerDropMs).toBe(500);
  });
});

describe('which phase a user request counts in', () => {
  const phases = planPhases(normalizeDrillOptions({}).phases);
  const fleet = phases.find((p) => p.name === 'fleet')!;
  const last = phases[phases.length - 1]!;

  it('counts a request whose whole deadline falls in its phase, and leaves out one that meets the next phase', () => {
    expect(countsInPhase(phases, fleet.startMs, 2_000)).toBe(true);
    expect(countsInPhase(phases, fleet.endMs - 2_001, 2_000)).toBe(true);
    expect(countsInPhase(phases, fleet.endMs - 2_000, 2_000)).toBe(false);
    expect(countsInPhase(phases, fleet.endMs - 1, 2_000)).toBe(false);
    expect(countsInPhase(phases, fleet.endMs, 2_000)).toBe(true);
  });

  it('counts the last phase to its end, and the first half of a phase shorter than two deadlines', () => {
    expect(countsInPhase(phases, last.endMs - 1, 2_000)).toBe(true);
    const mid = (fleet.startMs + fleet.endMs) / 2;
    expect(countsInPhase(phases, mid - 1, 60_000)).toBe(true);
    expect(countsInPhase(phases, mid, 60_000)).toBe(false);
    expect(countsInPhase(phases, fleet.endMs - 1, 0)).toBe(true);
  });
});
