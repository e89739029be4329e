import { describe, expect, it } from 'vitest';
import { cli } from './capture.test-helper.js';

describe('prazo calibrate: clamped timeouts are never silent', () => {
  it('says READ_TIMEOUT_CLAMPED and exits 1 when p99 × slack is above Node’s timer maximum (2^31−1 ms)', async () => {
    const { code, stdout } = await cli('calibrate', '--p99', '2000000000', '--deadline', '1500');
    expect(code).toBe(1);
    expect(stdout).toMatch(/WARNING READ_TIMEOUT_CLAMPED: .*2147483647 ms/);
    expect(stdout).toContain('WARNING DEADLINE_BELOW_ONE_ATTEMPT');
    const json = await cli('calibrate', '--p99', '2000000000', '--deadline', '1500', '--json');
    const out = JSON.parse(json.stdout) as { readMs: number; warnings: Array<{ code: string }> };
    expect(out.readMs).toBe(2_147_483_647);
    expect(out.warnings.map((w) => w.code)).toEqual(['DEADLINE_BELOW_ONE_ATTEMPT', 'READ_TIMEOUT_CLAMPED']);
  });

  it('says CONNECT_TIMEOUT_CLAMPED and exits 1 when the connect p99 would give a connect timeout above the read timeout', async () => {
    const { code, stdout } = await cli(
      'calibrate',
      '--p99',
      '100',
      '--connect-p99',
      '250',
      '--deadline',
      '1500',
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/connect timeout +140 ms/);
    expect(stdout).toContain('WARNING CONNECT_TIMEOUT_CLAMPED');
  });
});
