import { describe, expect, it } from 'vitest';
import { normalizeDrillOptions } from '../drill-options.js';
import { planPhases } from '../phase-plan.js';
import { isGoodput } from '../services/load-driver.js';
import type { CapacityFigures } from './capacity-figures.js';
import type { ConfigFigures, DrillReport, RouteFigures } from './drill-report.js';
import { formatReportTable, reportRows } from './table.js';

const route: RouteFigures = { sent: 100, successRate: 0.5, p50Ms: 40, p99Ms: 180 };
const PHASES = ['warmup', 'trigger', 'fleet', 'degrade', 'burst', 'tail', 'recovery'];
const capacity = (over: Partial<CapacityFigures> = {}): CapacityFigures => ({
  trigger: { successDuringDrop: 0.8, recoverMs: 500, peakQueue: 12 },
  loopDelay: { worst: { process: 'prazo/users', p99Ms: 21.4, maxMs: 40 }, maxMs: 40, stalled: false },
  byPhase: Object.fromEntries(
    PHASES.map((p) => [p, { success: 0.99, load: 1.1, dominatedBy: [] }]),
  ) as unknown as CapacityFigures['byPhase'],
  ...over,
});
const config = (over: Partial<ConfigFigures>): ConfigFigures => ({
  independentSuccessDuringDegradation: 1,
  checkout: route,
  catalog: route,
  byPhase: Object.fromEntries(
    PHASES.map((p) => [p, { checkout: route, catalog: route }]),
  ) as ConfigFigures['byPhase'],
  burstAmplification: 1.1012345,
  burstAmplificationBound: 1.10251,
  burstPlateauAmplification: 1.099,
  burstSupplier: { originals: 2000, retries: 200, hedges: 2 },
  afterDeadline: 0,
  supplierReceived: 9000,
  peakPoolInUse: 12,
  peakRetryRatio: 0.1,
  retryRatioAlertAfterMs: 1000,
  errorRateAlertAfterMs: 3000,
  retryAlertLeadMs: 2000,
  tail: {
    hedgedP99Ms: 300,
    unhedgedP99Ms: 900,
    edgeHedgedP99Ms: 250,
    edgeUnhedgedP99Ms: 800,
    hedgedExtraAttemptShare: 0.05,
    hedgeShare: 0.04,
    supplierHedges: 20,
  },
  edgeTimeoutMs: 252,
  fleet: {
    instanceRequests: [10, 40, 200],
    instanceShares: [0.04, 0.16, 0.8],
    sickShare: 0.04,
    slowShare: 0.16,
    amplification: 1.02,
  },
  capacity: capacity(),
  ...over,
});

// Naive's measured tail figures exist (its requests were timed) but it never hedges.
const report = {
  options: normalizeDrillOptions(),
  phases: planPhases(normalizeDrillOptions().phases),
  configs: {
    naive: config({
      burstAmplification: 2.8765,
      burstAmplificationBound: null,
      fleet: {
        instanceRequests: [120, 80, 80],
        instanceShares: [3 / 7, 2 / 7, 2 / 7],
        sickShare: 3 / 7,
        slowShare: 2 / 7,
        amplification: 1.4,
      },
    }),
    prazo: config({}),
  },
  checks: [],
} as unknown as DrillReport;
report.configs.naive.capacity = capacity({
  trigger: { successDuringDrop: 0.3, recoverMs: null, peakQueue: 240 },
  loopDelay: { worst: { process: 'naive/gateway', p99Ms: 75.2, maxMs: 300 }, maxMs: 300, stalled: true },
  byPhase: { ...capacity().byPhase, burst: { success: 0.4, load: 2.5, dominatedBy: ['prazo'] } },
});

const rowsByLabel = () => new Map(reportRows(report).map((r) => [r[0], r]));

describe('the drill report rows', () => {
  it('show "—" for naive on the hedging rows: naive never hedges', () => {
    const rows = rowsByLabel();
    for (const label of [
      'tail /checkout p99 hedged / unhedged',
      'tail supplier-call p99 hedged / unhedged (edge)',
      'hedges / all extra attempts of hedged requests, tail',
    ]) {
      expect(rows.get(label)?.[1]).toBe('—');
      expect(rows.get(label)?.[2]).not.toBe('—');
    }
  });

  it('explain every row, on the page itself', () => {
    for (const r of reportRows(report)) expect(r[r.length - 1]!.length, r[0]).toBeGreaterThan(40);
    const goodput = rowsByLabel().get('/checkout goodput, degradation')!;
    expect(goodput[3]).toContain('within the user’s 2000 ms deadline');
  });

  it('show the success and the share each configuration sent to the sick and the slow instance', () => {
    const rows = rowsByLabel();
    expect(rows.get('/checkout success, one instance sick, one slow')?.slice(1, 3)).toEqual([
      '50.00 %',
      '50.00 %',
    ]);
    expect(rows.get('share of supplier requests sent to the sick instance')?.slice(1, 3)).toEqual([
      '42.86 %',
      '4.00 %',
    ]);
    expect(rows.get('share sent to the slow instance')?.slice(1, 3)).toEqual(['28.57 %', '16.00 %']);
    expect(rows.get('/checkout success, one instance sick, one slow')![3]).toContain('answered 503 to 100 %');
  });

  it('print amplification with three decimals, and the bound it is checked against', () => {
    const amplification = rowsByLabel().get('supplier load amplification, error burst (plateau)')!;
    expect(amplification.slice(1, 3)).toEqual(['2.877× (1.099×)', '1.101× (1.099×)']);
    expect(amplification[3]).toContain('1.103×');
    expect(formatReportTable(report)).toContain('1.101× (1.099×)');
  });
});

describe('the rows of the finite-capacity supplier', () => {
  it('show the trigger, each phase’s success at its load, who is dominated, and stalled columns', () => {
    const rows = rowsByLabel();
    expect(rows.get('time to recover after the trigger')?.slice(1, 3)).toEqual(['never', '0.5 s']);
    expect(rows.get('supplier queue, peak, trigger')?.slice(1, 3)).toEqual(['240', '12']);
    expect(rows.get('/checkout success, trigger (capacity drop)')?.slice(1, 3)).toEqual([
      '30.00 %',
      '80.00 %',
    ]);
    expect(rows.get('/checkout success @ supplier load, error burst')?.slice(1, 3)).toEqual([
      '40.00 % @ 2.50× dominated',
      '99.00 % @ 1.10×',
    ]);
    expect(rows.get('event-loop delay p99, worst process')?.slice(1, 3)).toEqual(['75 ms stalled', '21 ms']);
  });
});

describe('goodput', () => {
  it('counts a 200 only when it reached the user within the deadline', () => {
    expect(isGoodput(200, 1999.9, 2000)).toBe(true);
    expect(isGoodput(200, 2000, 2000)).toBe(true);
    expect(isGoodput(200, 2000.1, 2000)).toBe(false); // the give-up timer fired late: still too late
    expect(isGoodput(503, 10, 2000)).toBe(false);
    expect(isGoodput(0, 10, 2000)).toBe(false);
  });
});

describe('the order writes row', () => {
  const writes = (created: number, duplicates: number, succeeded: number) => ({
    created,
    checkouts: created - duplicates,
    duplicates,
    checkoutsWithDuplicates: duplicates,
    sent: succeeded + 10,
    succeeded,
    store: null,
    replayed: 0,
    waited: 0,
    storeErrors: 0,
  });
  it('shows created / duplicate side effects / succeeded per column, "—" for a column that does not write', () => {
    const withWrites = {
      ...report,
      columns: ['naive', 'prazo', 'cockatiel'],
      configs: {
        naive: { ...report.configs.naive, orderWrites: writes(1491, 9, 1486) },
        prazo: { ...report.configs.prazo, orderWrites: { ...writes(1281, 0, 1263), store: 'redis' } },
        cockatiel: config({ orderWrites: null }),
      },
    } as unknown as DrillReport;
    const row = reportRows(withWrites).find((r) => r[0].startsWith('order writes'))!;
    expect(row.slice(1, 4)).toEqual(['1491 / 9 / 1486', '1281 / 0 / 1263', '—']);
    const unseen = reportRows(withWrites).find((r) => r[0] === 'orders the user did not see confirmed')!;
    expect(unseen.slice(1, 4)).toEqual(['—', '—', '—']); // a report made before the figure
    const seen = {
      ...withWrites,
      configs: {
        ...withWrites.configs,
        naive: { ...withWrites.configs.naive, orderWrites: { ...writes(1491, 9, 1486), unconfirmed: 412 } },
      },
    } as unknown as DrillReport;
    expect(reportRows(seen).find((r) => r[0] === 'orders the user did not see confirmed')![1]).toBe('412');
    expect(formatReportTable(withWrites)).toContain('1281 / 0 / 1263');
  });
});

describe('the drill report with the peers', () => {
  const withPeers = {
    ...report,
    columns: ['naive', 'prazo', 'cockatiel', 'haproxy'],
    configs: { ...report.configs, cockatiel: config({}), haproxy: config({ afterDeadline: 7 }) },
    skipped: [{ config: 'opossum', reason: 'not here' }],
    peerComparison: ['cockatiel matches prazo on peak pool occupancy (12 vs 12).'],
  } as unknown as DrillReport;

  it('has one figure per configuration on every row, "—" on the hedging rows for every peer', () => {
    const rows = reportRows(withPeers);
    for (const row of rows) expect(row).toHaveLength(4 + 2);
    const after = rows.find((r) => r[0] === 'supplier requests after the user’s deadline')!;
    expect(after.slice(1, 5)).toEqual(['0', '0', '0', '7']);
    const hedged = rows.find((r) => r[0] === 'tail /checkout p99 hedged / unhedged')!;
    expect(hedged[1]).toBe('—');
    expect(hedged[3]).toBe('—');
    expect(hedged[4]).toBe('—');
  });

  it('prints every column, where a peer matches or beats prazo, and the skipped column with its reason', () => {
    const text = formatReportTable(withPeers);
    expect(text.split('\n')[0]).toMatch(/naive\s+prazo\s+cockatiel\s+haproxy$/);
    expect(text).toContain('Where a peer matches or beats prazo:');
    expect(text).toContain('cockatiel matches prazo on peak pool occupancy');
    expect(text).toContain('SKIPPED  opossum: not here');
  });
});
