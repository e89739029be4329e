import { describe, expect, it } from 'vitest';
import type { ConfigFigures } from '../report/drill-report.js';
import { comparePeers } from './comparison.js';

const figures = (overrides: {
  catalog?: number;
  p99Ms?: number;
  afterDeadline?: number;
  pool?: number;
  sickShare?: number;
}): ConfigFigures => {
  const route = { sent: 100, successRate: 0.5, p50Ms: 300, p99Ms: overrides.p99Ms ?? 1000 };
  const phase = { checkout: route, catalog: route };
  return {
    independentSuccessDuringDegradation: overrides.catalog ?? 1,
    checkout: route,
    catalog: route,
    byPhase: { warmup: phase, fleet: phase, degrade: phase, burst: phase, tail: phase, recovery: phase },
    burstAmplification: 1.1,
    burstAmplificationBound: null,
    burstPlateauAmplification: 1.1,
    burstSupplier: { originals: 100, retries: 10, hedges: 0 },
    afterDeadline: overrides.afterDeadline ?? 0,
    supplierReceived: 1000,
    peakPoolInUse: overrides.pool ?? 20,
    peakRetryRatio: 0.1,
    retryRatioAlertAfterMs: null,
    errorRateAlertAfterMs: null,
    retryAlertLeadMs: null,
    tail: {
      hedgedP99Ms: null,
      unhedgedP99Ms: null,
      edgeHedgedP99Ms: null,
      edgeUnhedgedP99Ms: null,
      hedgedExtraAttemptShare: null,
      hedgeShare: null,
      supplierHedges: 0,
    },
    edgeTimeoutMs: 252,
    fleet: {
      instanceRequests: [1, 2, 97],
      instanceShares: [0.01, 0.02, 0.97],
      sickShare: overrides.sickShare ?? 0.01,
      slowShare: 0.02,
      amplification: 1,
    },
  } as ConfigFigures;
};

describe('comparePeers', () => {
  it('says plainly where a peer beats prazo and where it matches it', () => {
    const lines = comparePeers(
      {
        naive: figures({ catalog: 0.5 }),
        prazo: figures({ p99Ms: 1000, pool: 20 }),
        opossum: figures({ p99Ms: 800, pool: 40 }),
      },
      ['naive', 'prazo', 'opossum'],
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^opossum /);
    expect(lines[0]).toContain('beats prazo on user-facing /checkout p99 (800 ms vs 1000 ms)');
    expect(lines[0]).toContain('matches prazo on independent route (/catalog) success');
    expect(lines[0]).not.toContain('peak pool occupancy');
  });

  it('says where a peer sends the sick instance as little as prazo, or less', () => {
    const lines = comparePeers(
      {
        naive: figures({ sickShare: 0.4 }),
        prazo: figures({ sickShare: 0.03 }),
        haproxy: figures({ sickShare: 0.005 }),
        opossum: figures({ sickShare: 0.035 }),
        cockatiel: figures({ sickShare: 0.33 }),
      },
      ['naive', 'prazo', 'haproxy', 'opossum', 'cockatiel'],
    );
    expect(lines[0]).toContain(
      'beats prazo on share of supplier requests sent to the sick instance (0.50 % vs 3.00 %)',
    );
    expect(lines[1]).toContain(
      'matches prazo on share of supplier requests sent to the sick instance (3.50 % vs 3.00 %)',
    );
    expect(lines[2]).not.toContain('sick instance');
  });

  it('says so when a peer matches or beats prazo on no row', () => {
    const worse = figures({ catalog: 0.4, p99Ms: 5000, afterDeadline: 50, pool: 50 });
    const all = {
      ...worse,
      checkout: { ...worse.checkout, successRate: 0.1, p50Ms: 2000 },
      byPhase: {
        ...worse.byPhase,
        degrade: { ...worse.byPhase.degrade, checkout: { ...worse.checkout, successRate: 0 } },
        burst: { ...worse.byPhase.burst, checkout: { ...worse.checkout, successRate: 0 } },
        fleet: { ...worse.byPhase.fleet, checkout: { ...worse.checkout, successRate: 0.2 } },
      },
      burstAmplification: 3,
      peakRetryRatio: 2,
      fleet: { ...worse.fleet, sickShare: 0.4, slowShare: 0.3 },
    };
    expect(
      comparePeers({ naive: worse, prazo: figures({}), cockatiel: all }, ['naive', 'prazo', 'cockatiel']),
    ).toEqual(['cockatiel matches or beats prazo on no row.']);
  });

  it('compares nothing without peers', () => {
    expect(comparePeers({ naive: figures({}), prazo: figures({}) }, ['naive', 'prazo'])).toEqual([]);
  });
});
