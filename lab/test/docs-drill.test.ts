import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cli } from '../src/cli/capture.test-helper.js';
import { DEFAULT_PHASES, DRILL_DEFAULTS, QUICK_PHASES } from '../src/drill/drill-options.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const trafficS = (phases: Record<string, number>) =>
  (Object.values(phases).reduce((a, b) => a + b, 0) + DRILL_DEFAULTS.preWarmMs) / 1000;

/** Seconds of a stated duration: `2 min 3 s`, `59 s`, `1 min`; a range `59–60 s` gives both ends. */
function durations(text: string): number[] {
  const clean = text
    .replace(/\s*\(.*\)$/, '')
    .replace(/,.*$/, '')
    .trim();
  const range = /^(\d+)–(\d+) s$/.exec(clean);
  if (range) return [Number(range[1]), Number(range[2])];
  const span = /^(\d+ min \d+ s) – (\d+ min \d+ s)$/.exec(clean);
  if (span) return [...durations(span[1]!), ...durations(span[2]!)];
  const one = /^(?:(\d+) min)?\s*(?:(\d+) s)?$/.exec(clean);
  if (!one || (one[1] === undefined && one[2] === undefined)) throw new Error(`not a duration: "${text}"`);
  return [Number(one[1] ?? 0) * 60 + Number(one[2] ?? 0)];
}

/** The README's "Measured durations" table: the measured column by the row's first cell. */
function measured(): Map<string, string> {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Measured durations'));
  const rows = new Map<string, string>();
  for (const line of section.slice(0, section.indexOf('\n## ')).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length >= 5 && !/^-+$/.test(cells[1]!) && cells[1] !== 'what') rows.set(cells[1]!, cells[3]!);
  }
  return rows;
}

describe('the durations the docs state', () => {
  it('are measured in one place: the README’s "Measured durations", with both test commands and each drill', () => {
    const rows = measured();
    expect([...rows.keys()]).toEqual(
      expect.arrayContaining([
        'build, then the unit, property and integration tests',
        'build, then the real-time load tests',
        'the drill, default phases',
        'the drill, short phases',
      ]),
    );
    for (const [what, figure] of rows) expect(durations(figure).length, what).toBeGreaterThan(0);
  });

  // The traffic alone is fixed by the phases; the build, 14 processes to start, the overload
  // experiment and the report add up to a minute.
  it('give each drill at least its traffic, and less than a minute more', () => {
    const rows = measured();
    for (const [what, phases] of [
      ['the drill, default phases', DEFAULT_PHASES],
      ['the drill, short phases', QUICK_PHASES],
    ] as const) {
      for (const s of durations(rows.get(what)!)) {
        expect(s, what).toBeGreaterThanOrEqual(trafficS(phases));
        expect(s, what).toBeLessThanOrEqual(trafficS(phases) + 60);
      }
    }
  });

  it('are referred to, not restated, by the README’s commands, docs/drill.md and drill --help', async () => {
    const readme = read('README.md');
    const drillDoc = read('docs/drill.md');
    const { stdout: help } = await cli('drill', '--help');
    for (const text of [readme, drillDoc]) expect(text).toContain('#measured-durations');
    expect(help).toContain('Measured durations');
    // No whole-run duration in the commands' comments ("about 2 min", "~35 s").
    const commands = [readme.slice(0, readme.indexOf('## Requirements')), drillDoc.slice(0, 600)];
    for (const text of commands) expect(text).not.toMatch(/#[^\n]*(about|~)\s*\d+(\.\d+)?\s*(s|min)\b/);
  });
});
