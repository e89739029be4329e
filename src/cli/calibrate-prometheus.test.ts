import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classicFleet,
  type ScriptedStep,
  startFakePrometheus,
} from '../fleet/fake-prometheus.test-helper.js';
import type { CalibrateOutput } from './calibrate.js';
import { cli } from './capture.test-helper.js';

const STEP = 60_000;

/** Eleven healthy minutes around 40 ms and one with 400 ms answers, ending now. */
function steps(): ScriptedStep[] {
  const end = Math.floor(Date.now() / STEP) * STEP;
  return Array.from({ length: 12 }, (_, i) => ({
    endMs: end - (11 - i) * STEP,
    buckets:
      i === 6 ? { '0.05': 400, '0.5': 600, '+Inf': 0 } : { '0.03': 300, '0.05': 690, '0.075': 10, '+Inf': 0 },
  }));
}

describe('prazo calibrate --prometheus', () => {
  let server: Awaited<ReturnType<typeof startFakePrometheus>>;
  let broken: Awaited<ReturnType<typeof startFakePrometheus>>;
  beforeAll(async () => {
    server = await startFakePrometheus((req) => classicFleet(steps())(req));
    broken = await startFakePrometheus(() => ({
      status: 422,
      body: JSON.stringify({
        status: 'error',
        errorType: 'execution',
        error: 'query processing would load too many samples',
      }),
    }));
  });
  afterAll(async () => {
    await server.close();
    await broken.close();
  });

  it('prints the fleet policy like the file form, naming the excluded slice', async () => {
    const { code, stdout, stderr } = await cli(
      'calibrate',
      '--prometheus',
      server.url,
      '--dependency',
      'payments',
      '--range',
      '12m',
      '--step',
      '1m',
      '--deadline',
      '1500',
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(
      `prazo calibrate — ${server.url} prazo_attempt_duration_seconds_bucket{dependency="payments"} (prometheus, 12 slices of 60 s)`,
    );
    expect(stdout).toMatch(/Healthy latency — 11 of 12 slices, 11,000 calls/);
    expect(stdout).toMatch(
      /Excluded slices \(not calibrated on\)\n {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d–\d\d:\d\d:\d\d UTC {2}1,000 calls, 0\.0 % errors, p99 \d+(\.\d)? ms — p99-outlier: p99/,
    );
    expect(stdout).toMatch(/note: classic histogram, fleet-wide: every process's series summed/);
    expect(stdout).toMatch(/read timeout +\d+ ms {3}ceil\(p99 [\d.]+ ms × 1\.4\)/);
    expect(stdout).toMatch(/OK: the deadline holds the 2 attempts requested\./);
  });

  it('gives the queries and the server p99 per step in --json', async () => {
    const { code, stdout } = await cli(
      'calibrate',
      '--prometheus',
      server.url,
      '--metric',
      'http_client_request_duration_seconds',
      '--match',
      'job="checkout"',
      '--error-match',
      'status_code=~"5.."',
      '--range',
      '1h',
      '--deadline',
      '1500',
      '--json',
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as CalibrateOutput;
    expect(out.format).toBe('prometheus');
    expect(out.timed).toBe(true);
    expect(out.sliceMs).toBe(60_000);
    expect(out.fleet).toMatchObject({
      url: server.url,
      metric: 'http_client_request_duration_seconds',
      kind: 'classic',
      stepMs: 60_000,
      queries: {
        p99: 'histogram_quantile(0.99, sum by (le) (rate(http_client_request_duration_seconds_bucket{job="checkout"}[60s])))',
        errors:
          'sum(increase(http_client_request_duration_seconds_count{job="checkout",status_code=~"5.."}[60s]))',
        counts: null,
      },
    });
    expect(out.fleet!.endMs - out.fleet!.startMs).toBe(3_600_000);
    expect(out.excluded.map((s) => s.reason)).toEqual(['p99-outlier']);
    const range = server.requests.findLast((r) => r.path === '/api/v1/query_range');
    expect(Number(range!.end) - Number(range!.start)).toBe(3600 - 60);
  });

  it('exits 3 with the code when Prometheus is down', async () => {
    const down = await startFakePrometheus(() => ({ status: 200, body: '' }));
    await down.close();
    const { code, stdout, stderr } = await cli(
      'calibrate',
      '--prometheus',
      down.url,
      '--dependency',
      'payments',
      '--deadline',
      '1500',
    );
    expect(code).toBe(3);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^prazo calibrate: PROMETHEUS_UNAVAILABLE: cannot read Prometheus at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.* \(query: count\(last_over_time\(/,
    );
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 3 with the code when Prometheus refuses the query', async () => {
    const { code, stderr } = await cli(
      'calibrate',
      '--prometheus',
      broken.url,
      '--dependency',
      'payments',
      '--deadline',
      '1500',
    );
    expect(code).toBe(3);
    expect(stderr).toMatch(
      /^prazo calibrate: PROMETHEUS_QUERY_ERROR: Prometheus refused the query \(execution\): query processing would load too many samples/,
    );
  });

  it.each([
    [['--prometheus', 'http://127.0.0.1:9'], 'give exactly one of --dependency NAME or --metric NAME'],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--metric', 'b'],
      'give exactly one of --dependency NAME or --metric NAME',
    ],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--error-match', 'x="y"'],
      '--error-match goes with --metric',
    ],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--match', 'job=x'],
      'expected a quoted value',
    ],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--step', '1500ms'],
      'Expected `stepMs` to be a whole number of seconds',
    ],
    [['--prometheus', 'mailto:x', '--dependency', 'a'], 'Expected `url` to be an http(s) URL'],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--slice', '10s'],
      '--slice applies to --histogram files; with --prometheus use --step',
    ],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--dependency', 'a', '--format', 'csv'],
      '--format applies to --histogram files',
    ],
    [
      ['--prometheus', 'http://127.0.0.1:9', '--p99', '100', '--dependency', 'a'],
      'give exactly one of --p99 DURATION or --histogram FILE or --prometheus URL',
    ],
  ])('refuses %j with exit code 2', async (args, message) => {
    const { code, stderr } = await cli('calibrate', ...args, '--deadline', '1500');
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('documents the Prometheus source in --help', async () => {
    const { stdout } = await cli('calibrate', '--help');
    expect(stdout).toContain('--prometheus URL');
    expect(stdout).toContain('--dependency NAME');
    expect(stdout).toContain('3 Prometheus');
  });
});
