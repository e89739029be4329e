import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PHASES, DRILL_DEFAULTS, QUICK_PHASES } from '../src/lab/drill/drill-options.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const seconds = (amount: string, unit: string) => Number(amount) * (unit === 'min' ? 60 : 1);
const trafficS = (phases: Record<string, number>) =>
  (Object.values(phases).reduce((a, b) => a + b, 0) + DRILL_DEFAULTS.preWarmMs) / 1000;

describe('the drill durations the docs state', () => {
  // The traffic alone is fixed by the phases; building and starting 12 processes add up to a minute.
  it('README: npm start takes at least its traffic, and less than a minute more', () => {
    const match = /npm start\s+# the main job: the drill \(~(\d+(?:\.\d+)?) (s|min)\)/.exec(
      read('README.md'),
    );
    expect(match).not.toBeNull();
    const stated = seconds(match![1]!, match![2]!);
    expect(stated).toBeGreaterThanOrEqual(trafficS(DEFAULT_PHASES));
    expect(stated).toBeLessThanOrEqual(trafficS(DEFAULT_PHASES) + 60);
  });

  it('docs/drill.md: the default and --quick runs likewise', () => {
    const doc = read('docs/drill.md');
    const full = /npm start\s+# the default drill, about (\d+(?:\.\d+)?) (s|min)/.exec(doc);
    const quick = /drill --quick\s+# about (\d+(?:\.\d+)?) (s|min)/.exec(doc);
    expect(full && quick).not.toBeNull();
    expect(seconds(full![1]!, full![2]!)).toBeGreaterThanOrEqual(trafficS(DEFAULT_PHASES));
    expect(seconds(quick![1]!, quick![2]!)).toBeGreaterThanOrEqual(trafficS(QUICK_PHASES));
    expect(seconds(quick![1]!, quick![2]!)).toBeLessThanOrEqual(trafficS(QUICK_PHASES) + 30);
  });
});
