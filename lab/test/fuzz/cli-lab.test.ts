import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { captureIo, RUNS } from '../../../test/fuzz/arbitraries.js';
import { runCli } from '../../src/cli/run.js';

// The library's commands: test/fuzz/cli-arguments.test.ts; `prazo double`'s flags: cli-double.test.ts.

describe('fuzz: the lab’s CLI arguments', () => {
  it('prazo drill: an option named like an object property is unknown, not a phase (exit 2, before anything starts)', async () => {
    for (const flag of ['constructor', '__proto__', 'toString', '--constructor']) {
      const out = captureIo();
      const code = await runCli(['drill', flag, '1'], out.io);
      assert.equal(code, 2);
      assert.match(out.stderr(), /unknown option/);
    }
  });

  it('the lab’s CLI itself: unknown commands and stray flags exit 2 with one line', async () => {
    const name = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('dril', 'SIMULATE', '--bogus', '-', 'valueOf', 'constructor', '__proto__', 'toString'),
    );
    await fc.assert(
      fc.asyncProperty(
        name,
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
        async (command, rest) => {
          fc.pre(!['double', 'drill', 'simulate', 'help', '--help', '-h'].includes(command));
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
