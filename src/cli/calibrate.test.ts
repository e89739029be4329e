import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from './capture.test-helper.js';

const dir = mkdtempSync(join(tmpdir(), 'prazo-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('prazo calibrate', () => {
  it('gives connect 252, read 252 and 2 attempts for p99 180 within 1500 ms, as JSON', async () => {
    const { code, stdout, stderr } = await cli(
      'calibrate',
      '--p99',
      '180',
      '--deadline',
      '1500',
      '--attempts',
      '2',
      '--json',
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ connectMs: 252, readMs: 252, attempts: 2, warning: null });
  });

  it('reduces attempts with ATTEMPTS_REDUCED and exit code 1 when 600 ms cannot hold 3', async () => {
    const { code, stdout } = await cli(
      'calibrate',
      '--p99',
      '180',
      '--deadline',
      '600',
      '--attempts',
      '3',
      '--json',
    );
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      readMs: 252,
      attempts: 2,
      warning: { code: 'ATTEMPTS_REDUCED' },
    });
  });

  it('prints a readable table with the warning in plain words', async () => {
    const { code, stdout } = await cli('calibrate', '--p99', '180', '--deadline', '600', '--attempts', '3');
    expect(code).toBe(1);
    expect(stdout).toMatch(/read timeout\s+252 ms/);
    expect(stdout).toMatch(/connect timeout\s+252 ms/);
    expect(stdout).toMatch(/attempts\s+2/);
    expect(stdout).toContain('WARNING ATTEMPTS_REDUCED: A 600 ms deadline fits 2 attempts');
  });

  it('names DEADLINE_BELOW_ONE_ATTEMPT when not even one attempt fits', async () => {
    const { code, stdout } = await cli('calibrate', '--p99', '180', '--deadline', '200', '--json');
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      attempts: 1,
      warning: { code: 'DEADLINE_BELOW_ONE_ATTEMPT' },
    });
  });

  it('accepts durations with units', async () => {
    const { stdout } = await cli(
      'calibrate',
      '--p99',
      '0.18s',
      '--deadline',
      '1.5s',
      '--connect-p99',
      '20ms',
      '--json',
    );
    expect(JSON.parse(stdout)).toMatchObject({ connectMs: 28, readMs: 252, userDeadlineMs: 1500 });
  });

  it('calibrates on the healthy slices of a CSV and names the excluded one', async () => {
    const start = Date.parse('2026-12-02T10:00:00Z');
    const rows = ['timestamp,latency_ms,status'];
    for (let i = 0; i < 300; i++) {
      const bad = i >= 200;
      rows.push(`${start + i * 600},${bad ? 4000 : 100 + (i % 50)},${bad && i % 2 ? 'timeout' : 200}`);
    }
    const path = file('calls.csv', `${rows.join('\n')}\n`);
    const table = await cli('calibrate', '--histogram', path, '--deadline', '1500');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('2 of 3 slices');
    expect(table.stdout).toContain('2026-12-02 10:02:00–10:03:00 UTC');
    expect(table.stdout).toContain('error-rate');
    const json = JSON.parse(
      (await cli('calibrate', '--histogram', path, '--deadline', '1500', '--json')).stdout,
    );
    expect(json.excluded).toHaveLength(1);
    expect(json.excluded[0]).toMatchObject({ reason: 'error-rate', startMs: start + 120_000 });
    expect(json.healthy.p99Ms).toBeLessThan(150);
    expect(json.readMs).toBeLessThanOrEqual(Math.ceil(150 * 1.4));
  });

  it('applies the slice length and health-rule flags', async () => {
    const rows = ['ts,latency_ms,status'];
    for (let i = 0; i < 100; i++) rows.push(`${i * 100},${10 + (i % 10)},${i % 10 === 0 ? 500 : 200}`);
    const path = file('rule.csv', `${rows.join('\n')}\n`);
    // 10 % errors: unhealthy under the 5 % default, healthy with --max-error-rate 20%.
    expect((await cli('calibrate', '--histogram', path, '--deadline', '1500')).code).toBe(2);
    const ok = await cli(
      'calibrate',
      '--histogram',
      path,
      '--deadline',
      '1500',
      '--max-error-rate',
      '20%',
      '--json',
    );
    expect(ok.code).toBe(0);
    const sliced = await cli(
      'calibrate',
      '--histogram',
      path,
      '--deadline',
      '1500',
      '--slice',
      '5s',
      '--max-error-rate',
      '0.2',
      '--min-samples',
      '10',
      '--json',
    );
    expect(JSON.parse(sliced.stdout).included).toHaveLength(2);
  });

  it('warns QUANTILE_ABOVE_LARGEST_BUCKET with exit code 1 when the p99 of a Prometheus file is off the scale', async () => {
    const path = file(
      'offscale.prom',
      'rpc_seconds_bucket{le="0.1"} 900\nrpc_seconds_bucket{le="0.25"} 950\nrpc_seconds_bucket{le="+Inf"} 1000\n',
    );
    const json = await cli('calibrate', '--histogram', path, '--deadline', '1500', '--json');
    expect(json.code).toBe(1);
    const out = JSON.parse(json.stdout);
    expect(out.warning).toBeNull(); // the attempts fit; the file is what cannot be trusted
    expect(out.inputWarnings.map((w: { code: string }) => w.code)).toEqual(['QUANTILE_ABOVE_LARGEST_BUCKET']);
    const table = await cli('calibrate', '--histogram', path, '--deadline', '1500');
    expect(table.code).toBe(1);
    expect(table.stdout).toContain('WARNING QUANTILE_ABOVE_LARGEST_BUCKET: p99 falls in the +Inf bucket');
    expect(table.stdout).not.toContain('OK:');
  });

  it('warns SERIES_MERGED with exit code 1 when label series are merged unasked, and reads the one named', async () => {
    const path = file(
      'routes.prom',
      [
        'http_seconds_bucket{route="/checkout",le="0.1"} 90',
        'http_seconds_bucket{route="/checkout",le="+Inf"} 100',
        'http_seconds_bucket{route="/health",le="0.1"} 1000',
        'http_seconds_bucket{route="/health",le="+Inf"} 1000',
        '',
      ].join('\n'),
    );
    const merged = await cli('calibrate', '--histogram', path, '--deadline', '1500');
    expect(merged.code).toBe(1);
    expect(merged.stdout).toContain('WARNING SERIES_MERGED: 2 series of http_seconds with calls were merged');
    const one = await cli(
      'calibrate',
      '--histogram',
      path,
      '--deadline',
      '1500',
      '--metric',
      'http_seconds{route="/checkout"}',
      '--json',
    );
    // /checkout alone has 10 % above 100 ms: its p99 is off the scale, which the merge had hidden.
    expect(JSON.parse(one.stdout).inputWarnings.map((w: { code: string }) => w.code)).toEqual([
      'QUANTILE_ABOVE_LARGEST_BUCKET',
    ]);
    expect(JSON.parse(one.stdout).healthy.count).toBe(100);
  });

  describe('bad input: one line on stderr, exit code 2, no stack', () => {
    it.each([
      [['--p99', '180'], '--deadline is required'],
      [['--deadline', '1500'], 'give exactly one of --p99 DURATION or --histogram FILE'],
      [['--p99', 'fast', '--deadline', '1500'], 'Expected `--p99` to be a duration'],
      [
        ['--p99', '180', '--deadline', '0'],
        'Expected `--deadline` to be a finite number of milliseconds > 0',
      ],
      [['--p99', '180', '--deadline', '1500', '--attempts', '1.5'], 'Expected `--attempts` to be an integer'],
      [['--p99', '180', '--deadline', '1500', '--slack', '1'], 'Expected `--slack` to be a number > 1'],
      [['--p99', '180', '--deadline', '1500', '--frobnicate'], 'unknown option --frobnicate (see --help)'],
      [['--p99', '180', '--deadline', '1500', 'extra'], 'extra'],
      [
        ['--histogram', '/nonexistent/x.csv', '--deadline', '1500'],
        '/nonexistent/x.csv: cannot open the file (no such file)',
      ],
      [['--histogram', 'x.csv', '--format', 'xml', '--deadline', '1500'], 'Expected `--format` to be one of'],
    ])('%j', async (args, message) => {
      const { code, stdout, stderr } = await cli('calibrate', ...args);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toContain(message);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(/^prazo calibrate: /);
      expect(stderr).not.toMatch(/\n\s+at /);
    });

    it('names the file, the line and the value of a bad row', async () => {
      const path = file('bad.csv', 'latency_ms\n12\n13\noops\n');
      const { code, stderr } = await cli('calibrate', '--histogram', path, '--deadline', '1500');
      expect(code).toBe(2);
      expect(stderr).toBe(`prazo calibrate: ${path}:4: latency "oops" is not a number\n`);
    });

    it('says why when no slice is healthy', async () => {
      const path = file('few.txt', '12\n13\n');
      const { code, stderr } = await cli('calibrate', '--histogram', path, '--deadline', '1500');
      expect(code).toBe(2);
      expect(stderr).toContain('no healthy slice to calibrate on (all calls:');
    });
  });

  it('says a negative duration must be > 0, not that the flag is ambiguous', async () => {
    for (const value of ['-5', '-0.5s']) {
      const { code, stderr } = await cli('calibrate', '--p99', value, '--deadline', '1500');
      expect(code).toBe(2);
      expect(stderr).toContain('`--p99` to be a duration > 0');
      expect(stderr).not.toContain('ambiguous');
    }
  });

  it('prints its help', async () => {
    const { code, stdout } = await cli('calibrate', '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: prazo calibrate');
    expect(stdout).toContain('Exit codes: 0');
  });
});
