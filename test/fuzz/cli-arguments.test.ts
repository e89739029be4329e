import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { captureIo, numberish, RUNS } from './arbitraries.js';

// `prazo calibrate` and `prazo pool` run in-process with captured output: they are pure commands
// (they read at most one file), so 10 000 runs each cost seconds.
let dir = '';
const files: Record<string, string> = {
  'good.txt': Array.from({ length: 300 }, (_, i) => String(10 + (i % 50))).join('\n'),
  'good.csv': `timestamp,latency_ms,status\n${Array.from({ length: 300 }, (_, i) => `${1_700_000_000_000 + i * 1000},${20 + (i % 30)},200`).join('\n')}`,
  'bad.txt': '12\nabc\n',
  'empty.txt': '',
  'junk.bin': '\u0000\u00ff\ufffe',
};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prazo-fuzz-cli-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const duration = fc.oneof(
  fc.nat({ max: 100_000 }).map(String),
  fc.nat({ max: 5_000 }).map((n) => `${n}ms`),
  fc.double({ min: 0, max: 100, noNaN: true }).map((n) => `${n}s`),
  fc.nat({ max: 10 }).map((n) => `${n}m`),
  numberish,
  fc.string({ maxLength: 8 }),
);
const fileArg = fc.constantFrom(
  'good.txt',
  'good.csv',
  'bad.txt',
  'empty.txt',
  'junk.bin',
  'missing.txt',
  '',
);

function commandArgs(flags: Record<string, fc.Arbitrary<string> | null>): fc.Arbitrary<string[]> {
  const names = Object.keys(flags);
  const pair: fc.Arbitrary<string[]> = fc.constantFrom(...names).chain((name) => {
    const value = flags[name];
    return value === null || value === undefined
      ? fc.constant([`--${name}`])
      : value.map((v): string[] => [`--${name}`, v]);
  });
  const stray = fc.oneof(
    fc.constantFrom('--bogus', '-x', '--', '-', '--json=1', 'positional', '--p99='),
    fc.string({ maxLength: 6 }),
  );
  return fc
    .array(
      fc.oneof({ weight: 6, arbitrary: pair }, { weight: 1, arbitrary: stray.map((s): string[] => [s]) }),
      {
        maxLength: 7,
      },
    )
    .map((groups) => groups.flat());
}

const calibrateArgs = commandArgs({
  p99: duration,
  histogram: fileArg,
  format: fc.oneof(fc.constantFrom('lines', 'csv', 'json', 'prometheus', 'xml'), fc.string({ maxLength: 5 })),
  slice: duration,
  window: duration,
  column: fc.constantFrom('latency_ms', 'nope', ''),
  metric: fc.constantFrom('x', ''),
  'max-error-rate': fc.oneof(numberish, fc.constantFrom('5%', '0.05', '101%')),
  'p99-factor': numberish,
  'min-samples': numberish,
  deadline: duration,
  attempts: numberish,
  slack: fc.oneof(numberish, fc.constantFrom('1.4', '1.3', '3', '3.1', '1')),
  'connect-cap': duration,
  'connect-p99': duration,
  overhead: duration,
  json: null,
  help: null,
}).map((args) => args.map((a, i) => (args[i - 1] === '--histogram' ? join(dir, a) : a)));

const poolArgs = commandArgs({
  rps: fc.oneof(numberish, fc.nat({ max: 100_000 }).map(String)),
  pool: fc.oneof(numberish, fc.nat({ max: 10_000 }).map(String)),
  timeout: duration,
  p99: duration,
  slack: numberish,
  json: null,
  help: null,
});

/** What every command must do with any argv: an exit code in {0, 1, 2}; on 2, one line on stderr. */
async function expectCleanExit(argv: string[]): Promise<void> {
  const out = captureIo();
  const code = await runCli(argv, out.io);
  assert.ok([0, 1, 2].includes(code));
  if (code === 2) assert.match(out.stderr(), /^prazo [a-z]+: [^\n]+\n$/);
  else assert.equal(out.stderr(), '');
  if (code !== 2 && argv.includes('--json') && !argv.includes('--help') && !argv.includes('-h')) {
    JSON.parse(out.stdout());
  }
}

describe('fuzz: CLI arguments', () => {
  it('prazo calibrate: exit 0, 1 or 2, never an exception, one stderr line on bad input', async () => {
    await fc.assert(
      fc.asyncProperty(calibrateArgs, (args) => expectCleanExit(['calibrate', ...args])),
      { numRuns: RUNS },
    );
  });

  it('prazo pool: exit 0, 1 or 2, never an exception, one stderr line on bad input', async () => {
    await fc.assert(
      fc.asyncProperty(poolArgs, (args) => expectCleanExit(['pool', ...args])),
      { numRuns: RUNS },
    );
  });

  // `prazo drill` (the lab's): lab/test/fuzz/cli-lab.test.ts.

  it('prazo itself: unknown commands and stray flags exit 2 with one line', async () => {
    const name = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('calibrat', 'POOL', '--bogus', '-', 'valueOf', 'constructor', '__proto__', 'toString'),
    );
    await fc.assert(
      fc.asyncProperty(
        name,
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
        async (command, rest) => {
          fc.pre(
            ![
              'calibrate',
              'pool',
              'double',
              'drill',
              'simulate',
              'help',
              '--help',
              '-h',
              '--version',
              '-v',
            ].includes(command),
          );
          const out = captureIo();
          const code = await runCli([command, ...rest], out.io);
          assert.equal(code, 2);
          assert.match(out.stderr(), /^prazo: [^\n]+\n$/);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
