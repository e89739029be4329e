import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chartScaleSource, layoutPhaseLabels, sharedYAxis } from './chart-scale.js';

describe('sharedYAxis', () => {
  it('gives the panels of one metric the axis of the highest one', () => {
    // Supplier requests: naive peaks at 150 req/s, prazo at 60.
    const axis = sharedYAxis([
      [20, 150, 90],
      [20, 60, 30],
    ]);
    expect(axis).toEqual({ min: 0, max: 150, ticks: [0, 50, 100, 150], log: false });
    // The same axis whichever panel comes first.
    expect(sharedYAxis([[20, 60, 30], [20, 150, 90], []])).toEqual(axis);
  });

  it('keeps a small ratio small beside a large one (2 vs 0.15, alert line at 0.05)', () => {
    expect(
      sharedYAxis([
        [0.05, 2],
        [0.05, 0.15],
      ]).ticks,
    ).toEqual([0, 1, 2]);
    expect(sharedYAxis([[0.05, 0.15]]).ticks).toEqual([0, 0.05, 0.1, 0.15]);
  });

  it('puts round ticks from 0 to the first one at or above the highest value', () => {
    const ticks = (top: number) => sharedYAxis([[top]]).ticks;
    expect(ticks(50)).toEqual([0, 25, 50]);
    expect(ticks(55)).toEqual([0, 20, 40, 60]);
    expect(ticks(0.09)).toEqual([0, 0.05, 0.1]);
    expect(ticks(0.043)).toEqual([0, 0.025, 0.05]);
    expect(ticks(1)).toEqual([0, 0.5, 1]);
    expect(ticks(3)).toEqual([0, 1, 2, 3]);
  });

  it('keeps a fixed top whatever the data (a share in %)', () => {
    expect(sharedYAxis([[12], [3]], { max: 100 }).ticks).toEqual([0, 50, 100]);
  });

  it('draws 0–1 with no value above 0, ignoring values that are not finite', () => {
    expect(sharedYAxis([]).ticks).toEqual([0, 0.5, 1]);
    expect(sharedYAxis([[0, Number.NaN], [Number.POSITIVE_INFINITY]]).ticks).toEqual([0, 0.5, 1]);
  });

  it('spans whole decades on a log axis, from the lowest positive value of any panel', () => {
    // Configured timeout vs live p99: naive 30 000 ms, prazo 250 ms and a p99 of 180 ms.
    const axis = sharedYAxis(
      [
        [30_000, 180],
        [252, 180, 0],
      ],
      { log: true },
    );
    expect(axis).toEqual({ min: 100, max: 100_000, ticks: [100, 1000, 10_000, 100_000], log: true });
    expect(sharedYAxis([[5, 5]], { log: true }).ticks).toEqual([1, 2, 5, 10]);
    expect(sharedYAxis([[0.2]], { log: true }).ticks).toEqual([0.1, 0.2, 0.5, 1]);
    expect(sharedYAxis([[-3, 0]], { log: true }).ticks).toEqual([1, 2, 5, 10]);
  });

  it('fits every finite value of every panel, with 2–4 steps from 0 (property)', () => {
    const value = fc.double({ min: 1e-6, max: 1e9, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.array(value, { maxLength: 5 }), { minLength: 1, maxLength: 4 }), (panels) => {
        const axis = sharedYAxis(panels);
        const high = Math.max(0, ...panels.flat());
        expect(axis.min).toBe(0);
        expect(axis.ticks[0]).toBe(0);
        expect(axis.max).toBe(axis.ticks[axis.ticks.length - 1]);
        expect(axis.max).toBeGreaterThanOrEqual(high * (1 - 1e-9));
        // Never more than 2.5× the highest value: the data fills a good part of the panel.
        if (high > 0) expect(axis.max).toBeLessThanOrEqual(high * 2.5);
        expect(axis.ticks.length - 1).toBeGreaterThanOrEqual(2);
        expect(axis.ticks.length - 1).toBeLessThanOrEqual(4);
        // The axis of the union is the axis of its highest panel.
        const highestOf = (values: number[]) => values.reduce((m, v) => Math.max(m, v), 0);
        const top = panels.find((values) => highestOf(values) === high) ?? [];
        expect(sharedYAxis([top])).toEqual(axis);
      }),
    );
  });
});

describe('layoutPhaseLabels', () => {
  const measure = (text: string) => 5 * text.length;

  it('writes the longest name that fits under each band', () => {
    const labels = layoutPhaseLabels(
      [
        { start: 0, end: 200, names: ['healthy warm-up', 'warmup'] },
        { start: 200, end: 240, names: ['one instance sick, one slow', 'fleet'] },
      ],
      400,
      measure,
    );
    expect(labels).toEqual([
      { band: 0, text: 'healthy warm-up', x: 3, anchor: 'start' },
      { band: 1, text: 'fleet', x: 203, anchor: 'start' },
    ]);
  });

  it('ends a last band too narrow for its name at the right edge instead of cutting it', () => {
    const labels = layoutPhaseLabels(
      [
        { start: 0, end: 300, names: ['slow tail on every instance', 'tail'] },
        { start: 300, end: 320, names: ['recovery', 'recovery'] },
      ],
      320,
      measure,
    );
    expect(labels[1]).toEqual({ band: 1, text: 'recovery', x: 317, anchor: 'end' });
    expect(labels[1]!.x - measure(labels[1]!.text)).toBeGreaterThan(labels[0]!.x + measure(labels[0]!.text));
  });

  it('cuts a name with an ellipsis, or leaves it out, where nothing else fits', () => {
    const labels = layoutPhaseLabels(
      [
        { start: 0, end: 40, names: ['degrade'] },
        { start: 40, end: 50, names: ['burst'] },
        { start: 50, end: 100, names: ['tail'] },
      ],
      100,
      measure,
    );
    expect(labels).toEqual([
      { band: 0, text: 'degra…', x: 3, anchor: 'start' },
      { band: 2, text: 'tail', x: 53, anchor: 'start' },
    ]);
  });

  it('never overlaps two labels nor crosses the right edge (property)', () => {
    const bands = fc
      .array(fc.tuple(fc.integer({ min: 1, max: 200 }), fc.string({ minLength: 1, maxLength: 30 })), {
        minLength: 1,
        maxLength: 8,
      })
      .map((parts) => {
        let at = 0;
        return parts.map(([width, name]) => {
          const band = { start: at, end: at + width, names: [`${name} (long)`, name] };
          at += width;
          return band;
        });
      });
    fc.assert(
      fc.property(bands, (list) => {
        const right = list[list.length - 1]!.end;
        const labels = layoutPhaseLabels(list, right, measure);
        let previousEnd = Number.NEGATIVE_INFINITY;
        for (const label of labels) {
          const from = label.anchor === 'start' ? label.x : label.x - measure(label.text);
          const to = from + measure(label.text);
          expect(from).toBeGreaterThan(previousEnd);
          expect(to).toBeLessThanOrEqual(right);
          previousEnd = to;
        }
      }),
    );
  });
});

describe('chartScaleSource', () => {
  it('is JavaScript that evaluates to the same functions, for the page to embed', () => {
    const scale = new Function(`return ${chartScaleSource()};`)() as {
      sharedYAxis: typeof sharedYAxis;
      layoutPhaseLabels: typeof layoutPhaseLabels;
    };
    expect(scale.sharedYAxis([[150], [60]])).toEqual(sharedYAxis([[150], [60]]));
    const bands = [{ start: 0, end: 30, names: ['recovery'] }];
    expect(scale.layoutPhaseLabels(bands, 30, (t) => 4 * t.length)).toEqual(
      layoutPhaseLabels(bands, 30, (t) => 4 * t.length),
    );
  });
});
