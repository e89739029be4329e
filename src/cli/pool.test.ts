import { describe, expect, it } from 'vitest';
import { cli } from './capture.test-helper.js';

describe('prazo pool', () => {
  it('allows at most 500 ms per request at 100 rps on a pool of 50', async () => {
    const { code, stdout } = await cli('pool', '--rps', '100', '--pool', '50');
    expect(code).toBe(0);
    expect(stdout).toMatch(/max hold time per request\s+500 ms/);
    expect(stdout).toMatch(/largest tolerable timeout\s+500 ms/);
  });

  it('shows a 30 s timeout needs 3000 slots and exhausts the pool after about half a second', async () => {
    const { code, stdout } = await cli('pool', '--rps', '100', '--pool', '50', '--timeout', '30000');
    expect(code).toBe(1);
    expect(stdout).toContain('slots needed       3,000');
    expect(stdout).toContain('pool exhausted     after ~0.5 s');
  });

  it('gives the headroom of the calibrated timeout when the p99 is known', async () => {
    const { code, stdout } = await cli('pool', '--rps', '100', '--pool', '50', '--p99', '180');
    expect(code).toBe(0);
    expect(stdout).toContain('Calibrated timeout 252 ms');
    expect(stdout).toMatch(/headroom\s+248 ms/);
  });

  it('answers in JSON, with null for a pool that is never exhausted', async () => {
    const { stdout } = await cli(
      'pool',
      '--rps',
      '100',
      '--pool',
      '50',
      '--timeout',
      '30s',
      '--p99',
      '180',
      '--json',
    );
    expect(JSON.parse(stdout)).toMatchObject({
      maxHoldTimeMs: 500,
      maxTimeoutMs: 500,
      timeout: { timeoutMs: 30_000, slotsNeeded: 3000, exhaustedAfterMs: 500 },
      calibrated: { timeoutMs: 252, headroomMs: 248, exhaustedAfterMs: null },
    });
  });

  it.each([
    [['--rps', '100'], '--rps and --pool are required'],
    [['--rps', 'lots', '--pool', '50'], 'Expected `--rps` to be a number'],
    [['--rps', '0', '--pool', '50'], 'Expected `--rps` to be a finite number > 0'],
    [['--rps', '100', '--pool', '50', '--timeout', 'long'], 'Expected `--timeout` to be a duration'],
    [['--rps', '100', '--pool', '50', '--p99', '180', '--slack', '9'], 'Expected `--slack`'],
  ])('rejects %j with one line and exit code 2', async (args, message) => {
    const { code, stderr } = await cli('pool', ...args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('prints its help', async () => {
    expect((await cli('pool', '-h')).stdout).toContain('Usage: prazo pool');
  });
});
