import { describe, expect, it } from 'vitest';
import { normalizeDrillOptions } from '../drill-options.js';
import { planPhases } from '../phase-plan.js';
import type { DrillReport } from './drill-report.js';
import { instanceShareFigure } from './instance-share-figure.js';

const options = normalizeDrillOptions({ quick: true });
const phases = planPhases(options.phases);
const fleet = phases.find((p) => p.name === 'fleet')!;

/** Samples every 500 ms over warm-up and fleet, with the given per-instance counts in the fleet phase. */
const timeline = (during: number[][]) =>
  Array.from({ length: fleet.endMs / 500 }, (_, i) => {
    const tMs = (i + 1) * 500;
    const inFleet = tMs > fleet.startMs;
    return {
      tMs,
      phase: inFleet ? 'fleet' : 'warmup',
      instanceRequests: inFleet ? (during[(tMs - fleet.startMs) / 500 - 1] ?? [0, 0, 0]) : [9, 9, 9],
    };
  });

const report = {
  format: 'prazo-drill-report',
  options,
  phases,
  columns: ['naive', 'prazo'],
  configs: {
    naive: { fleet: { instanceShares: [0.4, 0.3, 0.3] } },
    prazo: { fleet: { instanceShares: [0.05, 0.15, 0.8] } },
  },
  timeline: {
    sampleMs: 500,
    samples: {
      naive: timeline([[10, 10, 10]]),
      prazo: timeline([
        [5, 5, 10],
        [0, 0, 0],
        [1, 4, 35],
      ]),
    },
  },
} as unknown as DrillReport;

describe('the figure of per-instance shares', () => {
  it('draws one line per sample of the fleet phase alone, with the shares and a full stacked bar', () => {
    const text = instanceShareFigure(report);
    const lines = text.split('\n');
    expect(lines[0]).toContain('one instance sick, one slow (19–24 s), per 500 ms');
    expect(lines[1]).toBe('bar: █ #0 sick (503)   ▒ #1 slow (+150 ms)   · #2 healthy');
    // Ten samples end within the 5 s phase, for each configuration; none of the warm-up's.
    expect(lines.filter((l) => /^\s+\d+\.\d\s/.test(l))).toHaveLength(20);
    expect(text).not.toContain('  16.5  ');
    const first = lines.find((l) => l.includes(' 19.5  ') && l.includes('█'))!;
    expect(first).toMatch(/33 %\s+33 %\s+33 %/);
    const prazoFirst = lines.filter((l) => l.includes(' 19.5  '))[1]!;
    expect(prazoFirst).toMatch(/25 %\s+25 %\s+50 %\s+█{10}▒{10}·{20}$/);
    // An interval in which no instance received anything says so instead of drawing 0 %.
    expect(lines.filter((l) => l.includes(' 20.0  '))[1]).toContain('(no request)');
    expect(lines.filter((l) => l.includes(' 20.5  '))[1]).toMatch(/█{1}▒{4}·{35}$/);
    // The whole phase's shares from the report, under each configuration.
    expect(lines.filter((l) => l.includes('phase'))).toEqual([
      expect.stringMatching(/phase\s+40 %\s+30 %\s+30 %$/),
      expect.stringMatching(/phase\s+5 %\s+15 %\s+80 %$/),
    ]);
  });

  it('draws only the configurations asked for', () => {
    const text = instanceShareFigure(report, ['prazo']);
    expect(text).toMatch(/^prazo /m);
    expect(text).not.toMatch(/^naive /m);
  });

  it('says so when the report has no fleet phase', () => {
    expect(instanceShareFigure({ ...report, phases: phases.filter((p) => p.name !== 'fleet') })).toMatch(
      /no fleet phase/,
    );
  });
});
