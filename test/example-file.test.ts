import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from '../src/cli/capture.test-helper.js';
import { readLatencyFile } from '../src/latency/index.js';

const example = fileURLToPath(new URL('../examples/checkout-balance.csv', import.meta.url));
const degradedStart = Date.parse('2026-12-02T12:03:00Z');

describe('the bundled example, examples/checkout-balance.csv', () => {
  it('has five healthy minutes and one degraded minute', async () => {
    const report = await readLatencyFile(example);
    expect(report).toMatchObject({ format: 'csv', timed: true, sliceMs: 60_000 });
    expect(report.slices).toHaveLength(6);
    expect(report.selection.included).toHaveLength(5);
    expect(report.selection.excluded).toHaveLength(1);
    expect(report.selection.excluded[0]).toMatchObject({ startMs: degradedStart, reason: 'error-rate' });
  });

  it('calibrates on the healthy slices only: p99 ≈ 180 ms, not the seconds of the degraded minute', async () => {
    const { code, stdout } = await cli(
      'calibrate',
      '--histogram',
      example,
      '--deadline',
      '1500',
      '--attempts',
      '2',
      '--json',
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.healthy.count).toBe(15_000);
    expect(out.healthy.p99Ms).toBeGreaterThan(165);
    expect(out.healthy.p99Ms).toBeLessThan(195);
    // The seed is tuned so that the example reproduces the article: connect 252, read 252, 2 attempts.
    expect(out).toMatchObject({ connectMs: 252, readMs: 252, attempts: 2, warning: null });
    expect(out.allSlicesP99Ms).toBeGreaterThan(4000);
  });

  it('names the degraded minute in the table npm start prints', async () => {
    const { stdout } = await cli(
      'calibrate',
      '--histogram',
      example,
      '--deadline',
      '1500',
      '--attempts',
      '2',
    );
    expect(stdout).toContain('Healthy latency — 5 of 6 slices');
    expect(stdout).toMatch(/Excluded slices[^\n]*\n {2}2026-12-02 12:03:00–12:04:00 UTC .*error-rate/);
  });
});
