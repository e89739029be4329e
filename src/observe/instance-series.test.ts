import { describe, expect, it } from 'vitest';
import { OTHER_INSTANCES } from '../wire/metric-names.js';
import { instanceFigures } from './instance-series.js';
import type { InstanceView } from './source.js';

const view = (i: number, over: Partial<InstanceView> = {}): InstanceView => ({
  origin: `http://10.0.0.${i}:80`,
  state: 'up',
  ewmaMs: 10 + i,
  inFlight: 1,
  share: 0.05,
  ...over,
});

describe('instanceFigures', () => {
  it('counts instances by state and gives each of the first ones its own series', () => {
    const f = instanceFigures([
      view(1),
      view(2, { state: 'ejected', ewmaMs: undefined }),
      view(3, { state: 'down' }),
    ]);
    expect(f.byState).toEqual({ up: 1, down: 1, ejected: 1, probing: 0, draining: 0 });
    expect(f.series.map((s) => s.instance)).toEqual([
      'http://10.0.0.1:80',
      'http://10.0.0.2:80',
      'http://10.0.0.3:80',
    ]);
    expect(f.series[0]).toMatchObject({ inFlight: 1, share: 0.05, latencySeconds: 0.011 });
    expect(f.series[1]!.latencySeconds).toBeUndefined();
  });

  it('sums the instances beyond the label limit into one "other" series, whatever the fleet size', () => {
    const fleet = Array.from({ length: 100 }, (_, i) => view(i));
    const f = instanceFigures(fleet, 10);
    expect(f.series).toHaveLength(11);
    const other = f.series[10]!;
    expect(other.instance).toBe(OTHER_INSTANCES);
    expect(other.inFlight).toBe(90);
    expect(other.share).toBeCloseTo(4.5);
    expect(other.latencySeconds).toBeCloseTo(0.109); // the largest of the rest
    expect(f.byState.up).toBe(100);
  });
});
