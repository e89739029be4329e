import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// Importing prazo changes nothing global: every entry point of the built package, ESM and CJS, each
// imported in a fresh process by test/support/import-probe.cjs, leaves undici's global dispatcher
// slots exactly as they were, and the global fetch (and the application's own undici) still works
// against a local server. `pretest` builds dist/; a bare `vitest run` without a build skips these.
const root = fileURLToPath(new URL('..', import.meta.url));
const probe = fileURLToPath(new URL('./support/import-probe.cjs', import.meta.url));
const built = existsSync(`${root}dist/index.js`) && existsSync(`${root}dist/index.cjs`);
/** Every entry point of package.json's exports map, by its file in dist/ (`.` is `index`). */
const entries = Object.keys(
  (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, unknown> }).exports,
)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? 'index' : key.slice(2)));
const formats = [
  ['esm', 'js'],
  ['cjs', 'cjs'],
] as const;
// The application's own undici: the copy under PRAZO_TEST_UNDICI_DIR (CI: undici 8 on Node 22–26),
// else prazo's own copy (an application whose undici npm deduped onto prazo's).
const applicationUndici = process.env['PRAZO_TEST_UNDICI_DIR'] ?? root;

interface Report {
  node: string;
  slots: string[];
  problems: string[];
}

const run = promisify(execFile);
async function importInFreshProcess(entry: string, format: string, scenario: string, undiciDir = root) {
  const extension = formats.find(([name]) => name === format)![1];
  const { stdout } = await run(
    process.execPath,
    [probe, `${root}dist/${entry}.${extension}`, format, scenario, undiciDir],
    { cwd: root, timeout: 15_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Report;
}

describe.skipIf(!built)('importing prazo changes nothing global', () => {
  describe('with no global dispatcher set before', () => {
    for (const entry of entries)
      for (const [format] of formats)
        it.concurrent(`prazo/${entry} (${format}): slots still empty; the global fetch works, on Node's own undici`, async () => {
          const report = await importInFreshProcess(entry, format, 'none');
          expect(report.problems).toEqual([]);
          // The global fetch then set Node's own dispatcher (undici 6 and 7 fill one slot, 8 both).
          expect(report.slots[0]).not.toBe('absent');
        });
  });

  describe("with the application's undici loaded first", () => {
    for (const entry of ['index', 'fleet', 'http'])
      for (const [format] of formats)
        it.concurrent(`prazo/${entry} (${format}): its dispatcher stays, its request() and the global fetch work`, async () => {
          const report = await importInFreshProcess(entry, format, 'app-first', applicationUndici);
          expect(report.problems).toEqual([]);
          expect(report.slots).not.toContain('absent');
        });
  });

  describe("with the application's undici (npm deduped onto prazo's copy) loaded after prazo", () => {
    for (const [format] of formats)
      it.concurrent(`prazo (${format}): that undici sets its dispatcher as if prazo were not there`, async () => {
        const report = await importInFreshProcess('index', format, 'app-after');
        expect(report.problems).toEqual([]);
        expect(report.slots).not.toContain('absent');
      });
  });

  describe('with the global fetch used before', () => {
    for (const [format] of formats)
      it.concurrent(`prazo (${format}): Node's dispatcher stays`, async () => {
        const report = await importInFreshProcess('index', format, 'fetch-first');
        expect(report.problems).toEqual([]);
      });
  });
});
