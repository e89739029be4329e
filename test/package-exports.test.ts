import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `pretest` builds dist/ before `npm test`; a bare `vitest run` without a build skips these.
const root = fileURLToPath(new URL('..', import.meta.url));
const built =
  existsSync(new URL('../dist/index.js', import.meta.url)) &&
  existsSync(new URL('../dist/index.cjs', import.meta.url));

const calls =
  'JSON.stringify([calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, attempts: 2 }), ' +
  'calibrateTimeout({ p99Ms: 180, userDeadlineMs: 600, attempts: 3 }), CALIBRATION_DEFAULTS])';

const node = (args: string[]): unknown =>
  JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 15_000 }));

const skipped = built ? '' : ' — skipped: dist/ not built (npm test builds it first)';
describe.skipIf(!built)(`the built package, through its exports map${skipped}`, () => {
  it('gives the same calibration from import (ESM) and require (CJS)', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `import { calibrateTimeout, CALIBRATION_DEFAULTS } from 'prazo'; console.log(${calls});`,
    ]);
    const cjs = node([
      '-e',
      `const { calibrateTimeout, CALIBRATION_DEFAULTS } = require('prazo'); console.log(${calls});`,
    ]);
    expect(esm).toEqual(cjs);
    const [reference, reduced] = esm as [Record<string, unknown>, Record<string, unknown>];
    expect(reference).toEqual({ connectMs: 252, readMs: 252, attempts: 2, warning: null, warnings: [] });
    expect(reduced).toMatchObject({ readMs: 252, attempts: 2, warning: { code: 'ATTEMPTS_REDUCED' } });
  });

  it('exposes tracing beside the metrics in prazo/otel, from import and require', () => {
    const list =
      'JSON.stringify([typeof m.instrument, typeof m.instrumentTracing, typeof m.createDurationProducer])';
    const esm = node(['--input-type=module', '-e', `import * as m from 'prazo/otel'; console.log(${list});`]);
    const cjs = node(['-e', `const m = require('prazo/otel'); console.log(${list});`]);
    expect(esm).toEqual(['function', 'function', 'function']);
    expect(cjs).toEqual(esm);
  });

  it('runs the built CLI as a separate process', () => {
    const out = node([
      'dist/cli.js',
      'calibrate',
      '--p99',
      '180',
      '--deadline',
      '1500',
      '--attempts',
      '2',
      '--json',
    ]);
    expect(out).toMatchObject({ connectMs: 252, readMs: 252, attempts: 2, warning: null });
  });
});
