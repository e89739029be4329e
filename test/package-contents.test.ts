import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist', 'index.js'));
/** What the examples may import besides prazo and Node's built-ins: prazo's dependency and the SDK shown. */
const EXAMPLE_IMPORTS = ['prazo', 'undici', 'ky'];
const skipped = built ? '' : ' — skipped: dist/ not built (npm test builds it first)';

let dir = '';
let files: string[] = [];
let manifest: { repository?: { type?: string; url?: string } } = {};
/** The package as a user installs it: the tarball unpacked into a node_modules of its own. */
let installed = '';

// `npm pack` of the built package (the test run builds first), unpacked next to the dependencies its
// examples import, linked from this checkout: the network is not needed.
beforeAll(async () => {
  if (!built) return;
  dir = await mkdtemp(join(tmpdir(), 'prazo-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  files = packed!.files.map((f) => f.path);
  installed = join(dir, 'node_modules', 'prazo');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', join(dir, packed!.filename), '-C', installed, '--strip-components=1']);
  for (const name of ['undici', 'ky'])
    await symlink(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!built)(`the published package (npm pack)${skipped}`, () => {
  it('ships no source maps and no data files', () => {
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => /\.(csv|tsv|ndjson|log)$/.test(f))).toEqual([]);
  });

  it('ships the build, the alert rules, the dashboard and the runnable examples, and no sources', () => {
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('alerts/prazo.rules.yml');
    expect(files).toContain('dashboards/prazo.json');
    expect(files.filter((f) => f.startsWith('examples/')).sort()).toEqual([
      'examples/with-fetch.mjs',
      'examples/with-sdk.mjs',
      'examples/with-undici.mjs',
    ]);
    expect(
      files.filter(
        (f) =>
          /^(src|test|bench)\//.test(f) ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.d.cts')),
      ),
    ).toEqual([]);
  });

  it('ships nothing of the lab (lab/, a workspace of the repository): no file, no bundle, no command', async () => {
    expect(files.filter((f) => /^lab\//.test(f) || /^dist\/(?:lab|drill|simulate|double)\b/.test(f))).toEqual(
      [],
    );
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(Object.keys(pkg.exports).filter((key) => key.includes('lab'))).toEqual([]);
    const cli = await readFile(join(installed, 'dist', 'cli.js'), 'utf8');
    expect(cli).not.toMatch(/runDrill|simulateAmplification|startDouble/);
  });

  it('names no private workspace (the lab, @prazo/cli-kit) in its manifest or any file: tsup bundles the kit', async () => {
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'])
      expect(
        Object.keys((pkg[field] as object | undefined) ?? {}).filter((name) => name.startsWith('@prazo/')),
      ).toEqual([]);
    const importing: string[] = [];
    for (const file of files.filter((f) => /\.(?:js|cjs|d\.ts|d\.cts)$/.test(f))) {
      const text = await readFile(join(installed, file), 'utf8');
      if (/(?:from\s*|import\s*\(\s*|require\(\s*)["']@prazo\//.test(text)) importing.push(file);
    }
    expect(importing).toEqual([]);
  });

  it('runs its CLI from the unpacked package, the kit bundled in: --help, calibrate, pool, a bad flag', async () => {
    const prazo = (...argv: string[]) =>
      run(process.execPath, [join(installed, 'dist', 'cli.js'), ...argv], { cwd: dir, timeout: 30_000 });
    expect((await prazo('--help')).stdout).toMatch(/^ {2}calibrate +derive/m);
    expect((await prazo('calibrate', '--p99', '180', '--deadline', '1500')).stdout).toMatch(
      /read timeout +252 ms/,
    );
    expect((await prazo('pool', '--rps', '100', '--pool', '20', '--timeout', '150ms')).stdout).toContain(
      'prazo pool',
    );
    const bad = await prazo('pool', '--bogus').then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(bad).toMatchObject({ code: 2, stderr: 'prazo pool: unknown option --bogus (see --help)\n' });
  });

  it('names its repository, so the README’s links to docs/ resolve on the registry', () => {
    expect(manifest.repository?.type).toBe('git');
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
  });

  it('has examples that import only prazo, its dependency, the SDK they show and node: built-ins', async () => {
    for (const file of files.filter((f) => f.startsWith('examples/'))) {
      const text = await readFile(join(installed, file), 'utf8');
      const specifiers = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]!);
      expect(specifiers.length, file).toBeGreaterThan(0);
      for (const specifier of specifiers)
        expect(
          specifier.startsWith('node:') || EXAMPLE_IMPORTS.includes(specifier),
          `${file}: ${specifier}`,
        ).toBe(true);
    }
  });
});

/** Runs an example from the installed package, as a user would (`node node_modules/prazo/examples/…`). */
async function example(name: string): Promise<string> {
  const { stdout } = await run(process.execPath, [join(installed, 'examples', `${name}.mjs`)], {
    cwd: dir,
    timeout: 30_000,
  });
  return stdout;
}

describe.skipIf(!built)(
  `the examples of docs/interceptor.md run from the installed package${skipped}`,
  () => {
    it('with-fetch: the global fetch retries a 503 through prazo', async () => {
      expect(await example('with-fetch')).toMatch(/^200 \{ sku: 42, stock: 7, attempt: '2;kind=retry' \}$/m);
    });

    it('with-undici: the interceptor on an Agent hedges around a slow instance', async () => {
      const out = await example('with-undici');
      const lines = out.split('\n').filter((line) => line.startsWith('200 '));
      expect(lines).toHaveLength(4);
      for (const line of lines) {
        expect(line).toMatch(/^200 fast \d+ ms$/);
        expect(Number(/(\d+) ms/.exec(line)![1])).toBeLessThan(700);
      }
    });

    it('with-sdk: ky, unmodified, gets a TypeError whose cause is the prazo error', async () => {
      const out = await example('with-sdk');
      expect(out).toContain('{ ok: true }');
      expect(out).toMatch(/PrazoError: (READ_TIMEOUT|DEADLINE_EXCEEDED)/);
    });
  },
);
