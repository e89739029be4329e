import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { captureIo, numberish, RUNS } from '../../../test/fuzz/arbitraries.js';

// The fuzz is about argument parsing: 10 000 runs cannot each start (up to 64) real servers on a
// loaded 2-core machine. Starting is replaced by a stand-in that records what it was asked for;
// everything else (parseArgs, integer ranges, behaviour JSON and @file reading) is the real code.
// Real starts are covered by lab/test/cli-double.test.ts.
const started: Array<{ count: number; options: { port?: number; seed?: number } }> = [];
vi.mock('../../src/index.js', async (importActual) => {
  const actual = await importActual<typeof import('../../src/index.js')>();
  return {
    ...actual,
    startDoubles: async (count: number, options: { port?: number; seed?: number }) => {
      started.push({ count, options });
      return { instances: [], urls: [], stats: () => [], close: async () => {} };
    },
  };
});

const { runDouble } = await import('../../src/cli/double.js');

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prazo-fuzz-double-'));
  await writeFile(join(dir, 'good.json'), '{"hang":0.1}');
  await writeFile(join(dir, 'bad.json'), '{"hang":2}');
  await writeFile(join(dir, 'junk.json'), '\u0000\u00ff{');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const flag = fc.constantFrom(
  '--port',
  '--instances',
  '--behaviour',
  '--seed',
  '--help',
  '-h',
  '--bogus',
  '-x',
  '--',
  '-',
  '--port=',
  '--instances=0',
);
const value = fc.oneof(
  numberish,
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '{"hang":true}',
    '{"statuses":[{"status":503,"share":0.2}]}',
    '{"hang":2}',
    '{',
    '[]',
    'null',
    '@good.json',
    '@bad.json',
    '@junk.json',
    '@missing.json',
    '@',
  ),
);
const argv = fc
  .array(fc.oneof(flag, value), { maxLength: 8 })
  // `@name` files live in the tmp dir; nothing else on the machine is read.
  .map((args) =>
    args.map((arg) => (arg.startsWith('@') && arg.length > 1 ? `@${join(dir, arg.slice(1))}` : arg)),
  );

describe('fuzz: `prazo double` arguments', () => {
  it('exits 0 or 2, never throws, and says what is wrong in one stderr line', async () => {
    const stopped = AbortSignal.abort();
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        started.length = 0;
        const out = captureIo();
        const code = await runDouble(args, out.io, { signal: stopped });
        assert.ok([0, 2].includes(code));
        if (code === 2) {
          assert.match(out.stderr(), /^prazo double: [^\n]+\n$/);
          assert.equal(started.length, 0);
        } else {
          assert.equal(out.stderr(), '');
        }
        for (const { count, options } of started) {
          assert.ok(count >= 1 && count <= 64);
          const port = options.port ?? 0;
          assert.ok(port === 0 || port + count - 1 <= 65_535);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
