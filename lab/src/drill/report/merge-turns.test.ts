import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { comparePeers } from '../peers/comparison.js';
import type { DrillConfig } from '../services/spec.js';
import { type DrillReport, mergeTurns } from './drill-report.js';

// A recorded `prazo drill --peers --json` (2026-12-06T05:57:27Z, all six columns in one run, before
// the turns; each column's timeline cut to three samples), cut into the turns a --peers run now makes
// (two columns each, the overload experiment with the first) and merged back.
const recorded = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'drill-peers-2026-12-06.json'),
    'utf8',
  ),
) as DrillReport;

function turnOf(columns: DrillReport['columns'], first: boolean): DrillReport {
  const pick = <T>(record: Partial<Record<string, T>>) =>
    Object.fromEntries(columns.map((c) => [c, record[c]])) as never;
  return {
    ...recorded,
    columns,
    configs: pick(recorded.configs),
    timeline: { sampleMs: recorded.timeline.sampleMs, samples: pick(recorded.timeline.samples) },
    overload: first ? recorded.overload : null,
    calibration: first ? recorded.calibration : {},
    waterfalls: {
      run: (recorded.waterfalls?.run ?? []).filter((w) => columns.includes(w.config as DrillConfig)),
      byPhase: (recorded.waterfalls?.byPhase ?? []).filter((w) => columns.includes(w.config as DrillConfig)),
    },
  };
}

describe('the turns of a --peers run, merged', () => {
  const turns = [
    turnOf(['naive', 'prazo'], true),
    turnOf(['cockatiel', 'opossum'], false),
    turnOf(['undici-retry', 'haproxy'], false),
  ];
  const merged = mergeTurns(turns, []);

  it('holds every column with what its own turn measured, in the order they ran', () => {
    expect(merged.columns).toEqual(recorded.columns);
    for (const column of recorded.columns) {
      expect(merged.configs[column]).toEqual(recorded.configs[column]);
      expect(merged.timeline.samples[column]).toEqual(recorded.timeline.samples[column]);
    }
    expect(merged.waterfalls?.run.map((w) => w.config).sort()).toEqual(
      (recorded.waterfalls?.run ?? []).map((w) => w.config).sort(),
    );
    // The overload experiment and prazo's calibration come from the first turn, which ran them.
    expect(merged.overload).toEqual(recorded.overload);
    expect(merged.calibration).toEqual(recorded.calibration);
  });

  it('judges across every column again: the peers against prazo, and the checks', () => {
    // The same judgements as the one run of all six made from the same figures.
    expect(merged.peerComparison).toEqual(recorded.peerComparison);
    expect(merged.tradeOffs).toEqual(recorded.tradeOffs);
    expect(merged.checks).toEqual(recorded.checks);
    expect(merged.peerComparison).toEqual(comparePeers(recorded.configs, recorded.columns));
    expect(merged.checks.map((c) => c.name)).toContain('whole run: prazo’s /checkout success ≥ naive’s');
    expect(merged.checks.some((c) => c.name.startsWith('overload'))).toBe(true);
  });
});
