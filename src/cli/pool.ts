import { parseArgs } from 'node:util';
import { type Command, EXIT, joinNegativeValues, parseFlags } from '@prazo/cli-kit';
import { InvalidInputError } from '../errors.js';
import { CALIBRATION_DEFAULTS } from '../policy/calibrate.js';
import type { PoolAnalysis, TimeoutHeadroom } from '../policy/littles-law.js';
import { analysePool } from '../policy/littles-law.js';
import { count, durationFlag, ms, numberFlag, percent, runCommand } from './args.js';

const HELP = `Usage: prazo pool --rps N --pool N [--timeout DURATION] [--p99 DURATION [--slack X]] [--json]

Little's law for a connection pool (or any pool of slots): slots in use = requests per second × time
each request holds its slot. Shows the longest a request may hold a slot, what a timeout does to the
pool when the dependency degrades fully (every call runs to the timeout), and the headroom of the
timeout calibrated from a healthy p99.

  --rps N                 requests per second that take a slot of this pool (required)
  --pool N                slots in the pool, e.g. connections (required)
  --timeout DURATION      a timeout to examine (for instance today's)
  --p99 DURATION          healthy p99: examine the calibrated timeout ceil(p99 × slack)
  --slack X               factor on the p99 (default ${CALIBRATION_DEFAULTS.slack})
  --json                  machine-readable result on stdout
  -h, --help              this help

Durations are milliseconds (30000) or carry a unit (250ms, 30s, 2m).

Exit codes: 0 every timeout examined fits the pool; 1 a timeout examined exhausts the pool under full
degradation; 2 bad input.

Example:
  prazo pool --rps 100 --pool 50 --timeout 30s --p99 180
`;

const FLAGS = {
  rps: { type: 'string' },
  pool: { type: 'string' },
  timeout: { type: 'string' },
  p99: { type: 'string' },
  slack: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readFlags(argv: string[]) {
  return parseFlags(
    () =>
      parseArgs({
        args: joinNegativeValues(argv, FLAGS),
        options: FLAGS,
        strict: true,
        allowPositionals: false,
      }).values,
  );
}

const OPTION_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  rps: 'rps',
  poolSize: 'pool',
  timeoutMs: 'timeout',
  p99Ms: 'p99',
  slack: 'slack',
});

/** `prazo pool`: see {@link HELP}. */
export const pool: Command = (argv, io) =>
  runCommand('pool', io, OPTION_FLAGS, async () => {
    const flags = readFlags(argv);
    if (flags.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const rps = numberFlag('rps', flags.rps);
    const poolSize = numberFlag('pool', flags.pool);
    if (rps === undefined || poolSize === undefined) {
      throw new InvalidInputError('--rps and --pool are required (e.g. --rps 100 --pool 50)');
    }
    const timeoutMs = durationFlag('timeout', flags.timeout);
    const p99Ms = durationFlag('p99', flags.p99);
    const slack = numberFlag('slack', flags.slack);
    const analysis = analysePool({
      rps,
      poolSize,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(p99Ms === undefined ? {} : { p99Ms }),
      ...(slack === undefined ? {} : { slack }),
    });
    io.stdout.write(flags.json ? `${JSON.stringify(analysis, jsonNumbers, 2)}\n` : renderPool(analysis));
    const exhausts = [analysis.timeout, analysis.calibrated].some(
      (t) => t !== null && Number.isFinite(t.exhaustedAfterMs),
    );
    return exhausts ? EXIT.warning : EXIT.ok;
  });

/** JSON has no Infinity: a pool that is never exhausted reports `exhaustedAfterMs: null`. */
function jsonNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}

function seconds(valueMs: number): string {
  return valueMs >= 1000 ? `${Math.round(valueMs / 100) / 10} s` : ms(valueMs);
}

function factor(value: number): string {
  return value >= 10 ? count(value) : String(Math.round(value * 100) / 100);
}

function describeTimeout(lines: string[], a: PoolAnalysis, t: TimeoutHeadroom): void {
  lines.push(
    `  slots needed       ${count(t.slotsNeeded)} = ${count(a.rps)} rps × ${seconds(t.timeoutMs)}  (${t.utilisation > 1 ? `${factor(t.utilisation)}× the pool` : `${percent(t.utilisation)} of the pool`})`,
  );
  if (Number.isFinite(t.exhaustedAfterMs)) {
    lines.push(
      `  pool exhausted     after ~${Math.round(t.exhaustedAfterMs / 10) / 100} s of degradation; every other route sharing it fails too`,
    );
    lines.push(
      `  over the limit by  ${ms(-t.headroomMs)} (${count(1 / t.headroomFactor)}× the largest tolerable timeout)`,
    );
  } else {
    lines.push('  pool exhausted     never: timed-out calls free slots faster than new ones arrive');
    lines.push(
      `  headroom           ${ms(t.headroomMs)} (the largest tolerable timeout is ${factor(t.headroomFactor)}× this one)`,
    );
  }
}

/** Renders the human-readable output of `prazo pool`. */
export function renderPool(a: PoolAnalysis): string {
  const lines = [
    `prazo pool — ${count(a.rps)} rps on a pool of ${count(a.poolSize)}`,
    '',
    "Little's law: slots in use = rps × hold time",
    `  max hold time per request   ${ms(a.maxHoldTimeMs)}  (${count(a.poolSize)} slots / ${count(a.rps)} rps)`,
    `  largest tolerable timeout   ${ms(a.maxTimeoutMs)}  (a fully degraded dependency holds every slot until the timeout)`,
  ];
  if (a.timeout !== null) {
    lines.push('', `Timeout ${ms(a.timeout.timeoutMs)} under full degradation`);
    describeTimeout(lines, a, a.timeout);
  }
  if (a.calibrated !== null) {
    lines.push(
      '',
      `Calibrated timeout ${ms(a.calibrated.timeoutMs)} = ceil(p99 ${ms(a.calibrated.p99Ms)} × ${a.calibrated.slack}) under full degradation`,
    );
    describeTimeout(lines, a, a.calibrated);
  }
  return `${lines.join('\n')}\n`;
}

export default pool;
