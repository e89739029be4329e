import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LIBRARY_ENTRIES, specifierOf } from '../scripts/library-entries.js';

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

/**
 * The runtime exports of `prazo`, pinned: adding one to the root (or taking one away) is a decision
 * made here, in docs (README's "API" section) and in CHANGELOG.md, never a side effect. The rest of
 * the library is in the subpaths; keep the root at 60 or fewer.
 */
const ROOT_EXPORTS = [
  'AttemptAbandonedError',
  'BALANCER_DEFAULTS',
  'BodyDestroyedError',
  'CALIBRATION_DEFAULTS',
  'CancelledError',
  'ConcurrencyLimitedError',
  'ConnectTimeoutError',
  'DEPENDENCY_DEFAULTS',
  'DIAGNOSTICS_CHANNELS',
  'DNS_ORIGINS_DEFAULTS',
  'DRIFT_MONITOR_DEFAULTS',
  'Deadline',
  'DeadlineExceededError',
  'DeadlineInsufficientError',
  'ForeignOriginError',
  'InvalidInputError',
  'InvalidOptionError',
  'PrazoError',
  'ReadTimeoutError',
  'RequestFailedError',
  'ResolverError',
  'RetryAfterExceedsDeadlineError',
  'RetryBudgetExhaustedError',
  'ServerOverloadedError',
  'ThrottledError',
  'calibrateTimeout',
  'callWithDeadline',
  'createDriftMonitor',
  'createFakeClock',
  'currentCriticality',
  'currentDeadline',
  'dependency',
  'dnsOrigins',
  'install',
  'isPrazoError',
  'nodeHttpRequest',
  'prazoInterceptor',
  'systemClock',
  'uninstall',
  'withCriticality',
  'withDeadline',
];

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, unknown>;
};
/** Every entry point of the exports map, as an import specifier: `prazo`, `prazo/policy` … */
const SPECIFIERS = Object.keys(manifest.exports)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? 'prazo' : `prazo/${key.slice(2)}`));
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** README's "API" section: from its heading to the next second-level heading ('' if it has none). */
const apiStart = readme.indexOf('\n## API\n');
const apiSection = apiStart === -1 ? '' : readme.slice(apiStart, readme.indexOf('\n## ', apiStart + 1));

describe('the public surface, as declared', () => {
  it('keeps the root at 60 runtime exports or fewer', () => {
    expect(ROOT_EXPORTS.length).toBeLessThanOrEqual(60);
    expect([...ROOT_EXPORTS].sort()).toEqual(ROOT_EXPORTS);
  });

  it('names every entry point and every runtime export of the root in the README API section', () => {
    expect(apiSection.length).toBeGreaterThan(0);
    expect(SPECIFIERS.filter((specifier) => !apiSection.includes(`\`${specifier}\``))).toEqual([]);
    expect(ROOT_EXPORTS.filter((name) => !new RegExp(`\\b${name}\\b`).test(apiSection))).toEqual([]);
  });
});

describe('the entry points, in one list', () => {
  it('builds, resolves for the lab and tests, and type-checks the entry points the exports map declares', () => {
    // tsup builds LIBRARY_ENTRIES; vitest.config.ts aliases them for the lab and the tests;
    // tsconfig.json's paths do the same for tsc (JSON, so a copy: checked here).
    const tsconfig = JSON.parse(readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8')) as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    const fromEntries = Object.entries(LIBRARY_ENTRIES).map(([entry, file]) => [specifierOf(entry), file]);
    expect(fromEntries.map(([specifier]) => specifier).sort()).toEqual([...SPECIFIERS].sort());
    expect(
      Object.entries(tsconfig.compilerOptions.paths).map(([specifier, [file]]) => [
        specifier,
        file?.slice(2),
      ]),
    ).toEqual(fromEntries);
  });
});

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

  it('exports exactly the pinned list from the root, through import (ESM) and require (CJS)', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `import * as m from 'prazo'; console.log(JSON.stringify(Object.keys(m).sort()));`,
    ]);
    const cjs = node(['-e', `console.log(JSON.stringify(Object.keys(require('prazo')).sort()));`]);
    expect(esm).toEqual(ROOT_EXPORTS);
    expect(cjs).toEqual(ROOT_EXPORTS);
  });

  it.each(SPECIFIERS)(
    'resolves %s from import (ESM) and require (CJS), with the same names and no normalize* helper',
    (specifier) => {
      const esm = node([
        '--input-type=module',
        '-e',
        `import * as m from '${specifier}'; console.log(JSON.stringify(Object.keys(m).sort()));`,
      ]) as string[];
      const cjs = node(['-e', `console.log(JSON.stringify(Object.keys(require('${specifier}')).sort()));`]);
      expect(esm.length).toBeGreaterThan(0);
      expect(cjs).toEqual(esm);
      expect(esm.filter((name) => name.startsWith('normalize'))).toEqual([]);
    },
  );

  it('shares one class per error between entry points, so instanceof holds across them', () => {
    const check =
      "[new f.PrometheusUnavailableError('x', { url: 'u' }) instanceof r.PrazoError, r.isPrazoError(new f.PrometheusNoDataError('x', { url: 'u' }), 'PROMETHEUS_NO_DATA')]";
    const esm = node([
      '--input-type=module',
      '-e',
      `import * as r from 'prazo'; import * as f from 'prazo/fleet'; console.log(JSON.stringify(${check}));`,
    ]);
    const cjs = node([
      '-e',
      `const r = require('prazo'), f = require('prazo/fleet'); console.log(JSON.stringify(${check}));`,
    ]);
    expect(esm).toEqual([true, true]);
    expect(cjs).toEqual(esm);
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
