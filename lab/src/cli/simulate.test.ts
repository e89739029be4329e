import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { isPrazoError } from 'prazo';
import { afterAll, describe, expect, it } from 'vitest';
import { formatSimulationTable } from '../simulate/report.js';
import {
  AMPLIFICATION_DEFAULTS,
  normalizeAmplificationOptions,
} from '../simulate/scenarios/amplification.js';
import { INSTANCES_DEFAULTS, normalizeInstancesOptions } from '../simulate/scenarios/instances.js';
import { normalizeOverloadOptions, OVERLOAD_DEFAULTS } from '../simulate/scenarios/overload.js';
import { normalizeTailOptions, TAIL_DEFAULTS } from '../simulate/scenarios/tail.js';
import { runCli } from './run.js';
import { parseSimulateArgs } from './simulate.js';

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['simulate', ...argv], {
    stdout: {
      write: (chunk: string) => {
        stdout += chunk;
        return true;
      },
    },
    stderr: {
      write: (chunk: string) => {
        stderr += chunk;
        return true;
      },
    },
  });
  return { code, stdout, stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'prazo-simulate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Generous timeouts: two tests run the full default scenarios on a machine that may be busy.
describe('prazo simulate', { timeout: 120_000 }, () => {
  it.each([
    [[], /which scenario/],
    [['outage'], /unknown scenario "outage"/],
    [['tail', '--bogus', '1'], /unknown option --bogus/],
    [['tail', '--fanout'], /--fanout needs a value/],
    [['tail', '--fanout', 'many'], /--fanout expects a number, got "many"/],
    [['tail', '--fanout', '0'], /--fanout to be an integer/],
    [['amplification', '--strategies', 'naive,turbo'], /--strategies/],
    [['amplification', 'extra'], /unexpected argument "extra"/],
    [['instances', '--sick', '11'], /--sick to be an integer between 0 and instances \(10\)/],
    [['instances', '--fanout', '3'], /unknown option --fanout for instances/],
    [['overload', '--factor', '0'], /--factor to be a number > 0/],
    [['overload', '--configs', 'naive,turbo'], /--configs/],
    [['overload', '--warmup-ms', '40000'], /--warmup-ms to be a number ≥ 0 and below durationMs/],
  ])('rejects %j with one line on stderr and exit status 2', async (argv, message) => {
    const { code, stdout, stderr } = await run(...(argv as string[]));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('reads any command line into options or one usage error, never anything else', () => {
    const token = fc.oneof(
      fc.constantFrom(
        'amplification',
        'tail',
        'instances',
        'overload',
        '--json',
        '--help',
        '--html',
        '--seed',
        '--rps',
        '--fanout',
        '--sick',
        '--factor',
        '--configs',
      ),
      fc.constantFrom(
        '--strategies',
        '--cancel-abandoned',
        '--cancel-abandoned=false',
        '--duration-ms=5',
        '--x',
      ),
      fc.constantFrom('1', '-3', '0.5', 'NaN', '1e309', '', 'naive,prazo', 'true'),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (argv) => {
        try {
          const parsed = parseSimulateArgs(argv);
          if (parsed.help) return;
          try {
            if (parsed.scenario === 'amplification') normalizeAmplificationOptions(parsed.options);
            else if (parsed.scenario === 'tail') normalizeTailOptions(parsed.options);
            else if (parsed.scenario === 'overload') normalizeOverloadOptions(parsed.options);
            else normalizeInstancesOptions(parsed.options);
          } catch (error) {
            expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
          }
        } catch (error) {
          expect(isPrazoError(error, 'INVALID_INPUT')).toBe(true);
          expect((error as Error).message).not.toContain('\n');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('documents a flag for every option of every scenario in --help', async () => {
    const { code, stdout } = await run('--help');
    expect(code).toBe(0);
    for (const key of [
      ...Object.keys(AMPLIFICATION_DEFAULTS),
      ...Object.keys(TAIL_DEFAULTS),
      ...Object.keys(INSTANCES_DEFAULTS),
      ...Object.keys(OVERLOAD_DEFAULTS),
    ])
      expect(stdout).toContain(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    expect(stdout).toContain('--seed');
    expect(stdout).toContain('--html FILE');
  });

  it('prints the same JSON twice for the same seed', async () => {
    const argv = [
      'amplification',
      '--duration-ms',
      '10000',
      '--trigger-start-ms',
      '3000',
      '--trigger-duration-ms',
      '3000',
      '--seed',
      '9',
      '--json',
    ];
    const first = await run(...argv);
    const second = await run(...argv);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(JSON.parse(first.stdout).options.seed).toBe(9);
  });

  it('writes a self-contained HTML page with inline SVG charts', async () => {
    const file = join(dir, 'tail.html');
    const { code, stdout } = await run('tail', '--duration-ms', '20000', '--html', file);
    expect(code).toBe(0);
    expect(stdout).toContain('hedge at the live p95');
    const html = readFileSync(file, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(3);
    expect(html).not.toMatch(/<script|<link|https?:\/\/|src=/i);
  });

  it('scales a line chart’s y axis to its data (extra requests around 0.04 on 0–0.05, not 0–1)', async () => {
    const file = join(dir, 'tail-axis.html');
    const { code, stdout } = await run('tail', '--duration-ms', '20000', '--json', '--html', file);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { strategies: Array<{ series: { extraLoad: number[] } }> };
    const highest = Math.max(...result.strategies.flatMap((s) => s.series.extraLoad));
    expect(highest).toBeGreaterThan(0);
    const top = Number(
      /aria-label="Extra requests \(hedges ÷ sub-requests\) per second" data-y-max="([\d.]+)"/.exec(
        readFileSync(file, 'utf8'),
      )?.[1],
    );
    expect(top).toBeGreaterThanOrEqual(highest);
    expect(top).toBeLessThanOrEqual(2.5 * highest);
  });

  it('with the defaults, shows naive retries at ≥ 2.5× the offered load during the trigger, prazo at ≤ 1.1× and recovering', async () => {
    // Every strategy runs on its own stream of the seed: naive's and prazo's figures here are those
    // of the default run of all four, at half its cost.
    const { code, stdout } = await run('amplification', '--json', '--strategies', 'naive,prazo');
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    const by = Object.fromEntries(result.strategies.map((s: { name: string }) => [s.name, s]));
    expect(by.naive.load.trigger).toBeGreaterThanOrEqual(2.5);
    expect(by.prazo.load.trigger).toBeLessThanOrEqual(1.1);
    expect(by.prazo.recovery.recovered).toBe(true);
    expect(by.prazo.recovery.afterTriggerEndMs).toBeLessThanOrEqual(3 * result.options.budgetWindowMs);
    // The metastable failure: the trigger is gone, naive's own retries keep the dependency down.
    expect(by.naive.recovery.recovered).toBe(false);
    // The table of the same run says so; the CLI prints such a table (a short run, naive alone).
    expect(formatSimulationTable(result)).toMatch(/naive .* NO — metastable/);
    const short = ['--duration-ms', '10000', '--trigger-start-ms', '3000', '--trigger-duration-ms', '3000'];
    const table = await run('amplification', '--strategies', 'naive', ...short);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^naive\s+\d+ ms/m);
    expect(table.stdout).not.toMatch(/^prazo\s+\d+ ms/m);
  });

  it('with the defaults, cuts the fan-out p99.9 ≥ 10× hedging at the live p95 with ≤ 5 % extra requests, next to the paper', async () => {
    const { code, stdout } = await run('tail', '--json');
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    const p95 = result.strategies.find((s: { name: string }) => s.name === 'p95');
    expect(p95.p999Cut).toBeGreaterThanOrEqual(10);
    expect(p95.extraLoad).toBeLessThanOrEqual(0.05);
    const table = await run('tail', '--duration-ms', '20000');
    expect(table.stdout).toContain("The paper's figures");
    expect(table.stdout).toMatch(/no hedging\s+1800 ms/);
    expect(table.stdout).toMatch(/hedge after 10 ms\s+74 ms\s+2 %/);
  });

  it("compares round-robin with prazo's balancer over a fleet with sick and slow instances", async () => {
    const { code, stdout } = await run('instances', '--instances', '3', '--duration-ms', '10000', '--json');
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    const by = Object.fromEntries(result.strategies.map((s: { name: string }) => [s.name, s]));
    expect(by.naive.shareByKind.sick).toBeCloseTo(1 / 3, 2);
    expect(by.prazo.shareByKind.sick).toBeLessThan(0.01);
    expect(by.prazo.success).toBeGreaterThan(by.naive.success);
    const file = join(dir, 'instances.html');
    const table = await run('instances', '--duration-ms', '5000', '--html', file);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/prazo's balancer, budgeted retries\s+100\.00 %/);
    expect(readFileSync(file, 'utf8').match(/<svg /g)?.length).toBe(2);
  });

  it('runs the overload scenario: a table, JSON and an HTML page with its charts', async () => {
    const small = [
      'overload',
      '--instances',
      '2',
      '--clients',
      '4',
      '--duration-ms',
      '8000',
      '--warmup-ms',
      '3000',
    ];
    const { code, stdout } = await run(...small, '--json');
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.scenario).toBe('overload');
    expect(result.configs.map((c: { label: string }) => c.label)).toEqual([
      'naive',
      'prazo',
      'prazo-protected',
    ]);
    const file = join(dir, 'overload.html');
    const table = await run(...small, '--configs', 'naive,protected', '--html', file);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^naive\s+0 rps\s+0\.0 %/m);
    expect(table.stdout).toMatch(/^prazo-protected\s+\d+ rps/m);
    expect(table.stdout).not.toMatch(/^prazo {2,}\d/m);
    expect(readFileSync(file, 'utf8').match(/<svg /g)?.length).toBe(3);
  });
});
