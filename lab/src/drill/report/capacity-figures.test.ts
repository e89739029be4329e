import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CapacityFigures,
  dominates,
  type PhaseTradeOff,
  recoveryMs,
  successNoise,
  tradeOffs,
} from './capacity-figures.js';

const phase = (success: number, load: number, checkouts?: number): PhaseTradeOff => ({
  success,
  load,
  dominatedBy: [],
  ...(checkouts === undefined ? {} : { checkouts }),
});

describe('which column dominates another in a phase', () => {
  it('takes more success at less load, each beyond its margin', () => {
    expect(dominates(phase(1, 0.99, 400), phase(0.9, 1.07, 400))).toBe(true);
    // Less load but less success, or the same success: a trade-off, or equal.
    expect(dominates(phase(0.9, 0.99, 400), phase(1, 1.07, 400))).toBe(false);
    expect(dominates(phase(1, 0.99, 400), phase(1, 1.07, 400))).toBe(false);
    // More success, the same load (within 0.01 request per checkout).
    expect(dominates(phase(1, 1.065, 400), phase(0.9, 1.07, 400))).toBe(false);
  });

  it('does not call a difference within the noise of the phase’s checkouts more success', () => {
    // One checkout of 250: 99.6 % against 100 %.
    expect(successNoise(phase(1, 0.992, 250), phase(0.996, 1.016, 250))).toBeGreaterThan(0.004);
    expect(dominates(phase(1, 0.992, 250), phase(0.996, 1.016, 250))).toBe(false);
    // The same two figures over many more checkouts are a difference.
    expect(dominates(phase(1, 0.992, 250_000), phase(0.996, 1.016, 250_000))).toBe(true);
    // Without counts (a report written before they were kept) only the fixed margin applies.
    expect(dominates(phase(1, 0.992), phase(0.996, 1.016))).toBe(true);
  });

  it('never says two columns dominate each other, nor a column itself', () => {
    const arb = fc.record({
      success: fc.double({ min: 0, max: 1, noNaN: true }),
      load: fc.double({ min: 0, max: 5, noNaN: true }),
      checkouts: fc.integer({ min: 1, max: 10_000 }),
    });
    fc.assert(
      fc.property(arb, arb, (a, b) => {
        const x = phase(a.success, a.load, a.checkouts);
        const y = phase(b.success, b.load, b.checkouts);
        return !(dominates(x, y) && dominates(y, x)) && !dominates(x, x);
      }),
    );
  });
});

describe('the time to recover', () => {
  it('is the first instant from which success holds for the whole span', () => {
    const slice = (sent: number, failed: number) => ({ sent, failed });
    const buckets = [
      slice(10, 10),
      slice(10, 5),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
    ];
    expect(recoveryMs(buckets, 500, 0, 3_500)).toBe(1_000);
    expect(recoveryMs(buckets.slice(0, 5), 500, 0, 2_500)).toBeNull();
  });
});

describe('the trade-offs the report states', () => {
  const column = (byPhase: Record<string, PhaseTradeOff>): { capacity: CapacityFigures } => ({
    capacity: {
      trigger: { successDuringDrop: null, recoverMs: null, peakQueue: 0 },
      loopDelay: null,
      byPhase: byPhase as CapacityFigures['byPhase'],
    },
  });
  const labels = {
    burst: 'error burst',
    tail: 'slow tail on every instance',
    fleet: 'one instance sick, one slow',
  };

  it('says where another column got more checkouts through at more load, the burst as the article’s', () => {
    const sentences = tradeOffs(
      {
        naive: column({
          burst: phase(0.3478, 1.67, 900),
          tail: phase(0.9756, 1.07, 900),
          fleet: phase(0.9575, 1.43, 400),
        }),
        prazo: column({
          burst: phase(0.2, 1.13, 900),
          tail: phase(0.9933, 1.07, 900),
          fleet: phase(0.9975, 0.99, 400),
        }),
      },
      ['naive', 'prazo'],
      labels,
    );
    expect(sentences).toHaveLength(1);
    expect(sentences[0]).toMatch(
      /^error burst: naive got 14\.8 points more .*\(34\.78 % against prazo’s 20 %\) for 1\.48× prazo’s supplier load \(1\.67 against 1\.13 requests per checkout\) — the article’s deliberate trade-off/,
    );
  });

  it('says nothing of a difference within the noise, nor of one at no more load', () => {
    const sentences = tradeOffs(
      {
        naive: column({ burst: phase(0.349, 1.715, 900), trigger: phase(1, 1.0, 500) }),
        prazo: column({ burst: phase(0.31, 1.151, 900), trigger: phase(0.86, 1.0, 500) }),
      },
      ['naive', 'prazo'],
      labels,
    );
    expect(sentences).toEqual([]);
  });
});
