import { describe, expect, it } from 'vitest';
import type { OverloadFigures } from '../../overload/overload-run.js';
import { overloadChecks } from './drill-report.js';

const figures = (
  config: OverloadFigures['config'],
  inTime: number,
  lateSuccesses: number,
): OverloadFigures => ({
  config,
  offeredRps: 300,
  capacityRps: 100,
  inTime,
  goodputRps: inTime / 10,
  goodputShare: inTime / 1000,
  successShare: inTime / 3000,
  admittedP50Ms: 40,
  admittedP99Ms: 180,
  lateSuccesses,
  supplierWorkForNobody: 0,
  amplification: 1,
  supplierPeakQueue: 0,
});

describe('the overload checks of the drill report', () => {
  const inTimeCheck = (late: number) =>
    overloadChecks([figures('naive', 50, 100), figures('prazo-protected', 950, late)]).find((c) =>
      c.name.includes('within the user’s deadline'),
    )!;

  it('state the 1 % bound on late answers in the check and in its figures', () => {
    const check = inTimeCheck(1);
    expect(check.pass).toBe(true);
    expect(check.name).toContain('at most 1 % after it');
    expect(check.detail).toBe(
      '950 answered in time (p99 180 ms), 1 after the deadline (0.11 %; the bound is 1 %)',
    );
  });

  it('fail once more than 1 % came after the deadline', () => {
    expect(inTimeCheck(9).pass).toBe(true);
    expect(inTimeCheck(10).pass).toBe(false);
  });
});
