import { describe, expect, it } from 'vitest';
import type { OverloadFigures } from './overload-run.js';
import { formatOverloadTable, overloadRows } from './overload-table.js';

const figures = (config: OverloadFigures['config'], goodputRps: number): OverloadFigures => ({
  config,
  offeredRps: 960,
  capacityRps: 320,
  inTime: goodputRps * 4,
  goodputRps,
  goodputShare: goodputRps / 320,
  successShare: goodputRps / 960,
  admittedP50Ms: goodputRps === 0 ? null : 470,
  admittedP99Ms: goodputRps === 0 ? null : 497,
  lateSuccesses: 0,
  supplierWorkForNobody: 10,
  amplification: 1.1,
  supplierPeakQueue: 8,
});

describe('the overload table', () => {
  it('says what was offered to what, one column per configuration, n/a where nothing was admitted', () => {
    const text = formatOverloadTable([figures('naive', 0), figures('prazo-protected', 307)]);
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'Overload: 960 rps offered open loop to a supplier that serves 320 rps (3× its capacity)',
    );
    expect(lines[1]).toMatch(/^\s+naive\s+prazo-protected$/);
    expect(lines[2]).toMatch(/^-+$/);
    expect(text).toContain('goodput ÷ capacity');
    expect(text).toMatch(/0 %\s+96 %/);
    expect(text).toContain('n/a / n/a');
  });

  it('ends every row with what it means, for the report page', () => {
    for (const row of overloadRows([figures('prazo', 0)])) expect(row).toHaveLength(3);
  });
});
