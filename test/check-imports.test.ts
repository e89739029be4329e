import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkFolders, folderEdges, parseLayers, syncFolderTable } from '../scripts/folder-layers.js';
import {
  KIT_LEAVES,
  kitImportProblems,
  labImportProblems,
  libraryImportsOfKit,
  libraryImportsOfLab,
  manifestProblems,
} from '../scripts/lab-imports.js';

// The folder rules of `npm run imports` (scripts/check-imports.ts) on small graphs, then the layers
// docs/architecture.md declares against src/ as it is.
const layers = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('the folder check of npm run imports', () => {
  it('catches a circle between two folders of one layer', () => {
    const edges = folderEdges({
      'a/one.ts': ['b/two.ts', 'a/three.ts'],
      'b/two.ts': ['c/four.ts'],
      'c/four.ts': ['a/three.ts'],
      'a/three.ts': [],
    });
    const check = checkFolders(edges, layers({ a: 1, b: 1, c: 1 }), {});
    expect(check.problems).toEqual(['folder circle among a, b, c']);
  });

  it('catches an upward import, and the circle it closes', () => {
    const edges = folderEdges({ 'low/x.ts': ['high/y.ts'], 'high/y.ts': ['low/z.ts'], 'low/z.ts': [] });
    const check = checkFolders(edges, layers({ low: 0, high: 1 }), {});
    expect(check.problems).toEqual([
      'upward import low -> high (layer 0 → 1): low/x.ts => high/y.ts',
      'folder circle among high, low',
    ]);
  });

  it('reports a listed exception apart, and names an entry the code no longer needs', () => {
    const edges = folderEdges({ 'low/x.ts': ['high/y.ts'], 'high/y.ts': ['low/z.ts'], 'low/z.ts': [] });
    const check = checkFolders(edges, layers({ low: 0, high: 1 }), {
      'low -> high': 'to move',
      'high -> gone': 'moved already',
    });
    expect(check.problems).toEqual([]);
    expect(check.known).toEqual(['low -> high (to move): low/x.ts => high/y.ts']);
    expect(check.stale).toEqual(['high -> gone']);
  });

  it('accepts imports downward and within a layer, and flags a folder with no layer', () => {
    const edges = folderEdges({
      'top/a.ts': ['mid/b.ts', 'top/c.ts'],
      'mid/b.ts': ['mid2/d.ts'],
      'x.ts': ['mid/b.ts'],
    });
    expect(checkFolders(edges, layers({ top: 2, mid: 1, mid2: 1, x: 3 }), {}).problems).toEqual([]);
    expect(checkFolders(edges, layers({ top: 2, mid: 1, x: 3 }), {}).problems).toEqual([
      'folder mid2 has no layer (docs/architecture.md, Layers)',
    ]);
  });

  it("reads docs/architecture.md's layers, which place every folder and top-level file of src/", () => {
    const doc = readFileSync(new URL('../docs/architecture.md', import.meta.url), 'utf8');
    const declared = parseLayers(doc, '<!-- layers:begin -->', '<!-- layers:end -->');
    const units = readdirSync(new URL('../src/', import.meta.url), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || !entry.name.endsWith('.test.ts'))
      .map((entry) => entry.name.replace(/\.ts$/, ''));
    expect([...declared.keys()].sort()).toEqual(units.sort());
    expect(declared.get('clock')).toBe(0);
    expect(declared.get('engine')).toBeLessThan(declared.get('client')!);
    expect(declared.get('cli')).toBe(Math.max(...declared.values()));
  });
});

describe("the Folders table's imports column", () => {
  it('is set from the edges; rows that differ are named, folders without a row too', () => {
    const doc = [
      '| folder | role | imports |',
      '| --- | --- | --- |',
      '| `a/` | the first | `b` |',
      '| `b.ts` | the second | — |',
      '',
      'after',
    ].join('\n');
    const edges = folderEdges({ 'a/x.ts': ['c/y.ts', 'b.ts'], 'b.ts': [], 'c/y.ts': ['b.ts'] });
    const synced = syncFolderTable(doc, edges, '| folder ');
    expect(synced.stale).toEqual(['a']);
    expect(synced.missing).toEqual(['c']);
    expect(synced.text.split('\n')[2]).toBe('| `a/` | the first | `b`, `c` |');
    expect(synced.text.split('\n').slice(3)).toEqual(doc.split('\n').slice(3));
  });
});

describe('the lab check of npm run imports', () => {
  const entries = ['prazo', 'prazo/http', 'prazo/policy'];

  it('accepts the entry points, the lab’s own modules and, in tests, the shared test helpers', () => {
    const check = labImportProblems(
      {
        'lab/src/a.ts':
          "import { dependency } from 'prazo';\nimport { b } from './b.js';\nimport('prazo/http');",
        'lab/src/b.test.ts': "import { startServer } from '../../test/support/servers.js';",
        'lab/test/c.test.ts': "import { fc } from '../../test/fuzz/arbitraries.js';",
      },
      entries,
    );
    expect(check.problems).toEqual([]);
  });

  it('catches a deep import into src/, an entry point that is none, and test helpers outside tests', () => {
    const check = labImportProblems(
      {
        'lab/src/a.ts': "import { createEngine } from '../../src/engine/engine.js';",
        'lab/src/b.ts': "export { x } from 'prazo/engine';",
        'lab/src/c.ts': "const m = await import('../../test/support/servers.js');",
      },
      entries,
    );
    expect(check.problems).toEqual([
      "lab/src/a.ts imports src/engine/engine.js past the library's entry points (import prazo or a subpath)",
      'lab/src/b.ts imports prazo/engine, which is not an entry point of prazo',
      "lab/src/c.ts imports test/support/servers.js past the library's entry points (import prazo or a subpath)",
    ]);
  });

  it('reports a listed exception apart, and names one whose import is gone', () => {
    const check = labImportProblems(
      { 'lab/src/a.test.ts': "import { t } from '../../src/testing/t.js';" },
      entries,
      { 'lab/src/a.test.ts => src/testing/t.js': 'a test seam', 'lab/src/gone.ts => src/x.js': 'moved' },
    );
    expect(check.problems).toEqual([]);
    expect(check.known).toEqual(['lab/src/a.test.ts => src/testing/t.js (a test seam)']);
    expect(check.stale).toEqual(['lab/src/gone.ts => src/x.js']);
  });

  it('catches a library file that imports the lab, by its package name or a path', () => {
    expect(
      libraryImportsOfLab({
        'src/a.ts': "import { startDouble } from '@prazo/lab';",
        'src/b.ts': "import { x } from '../lab/src/x.js';",
        'src/c.test.ts': "import { createRandom } from '@prazo/lab';",
      }),
    ).toEqual(['src/a.ts imports the lab (@prazo/lab)', 'src/b.ts imports the lab (../lab/src/x.js)']);
  });
});

describe('the kit check of npm run imports (@prazo/cli-kit, packages/cli-kit)', () => {
  const entries = ['prazo', 'prazo/http'];

  it('accepts the kit on the entry points and its own files, the leaf importing nothing', () => {
    expect(
      kitImportProblems(
        {
          'packages/cli-kit/src/args.ts': "import { InvalidInputError } from 'prazo';",
          'packages/cli-kit/src/index.ts': "export { parseFlags } from './args.js';",
          'packages/cli-kit/src/format.ts': 'export function formatMs(value: number): string {}',
        },
        entries,
      ),
    ).toEqual([]);
  });

  it('catches a deep import into src/, the lab, and a leaf that imports anything', () => {
    expect(
      kitImportProblems(
        {
          'packages/cli-kit/src/a.ts': "import { EXIT } from '../../../src/errors.js';",
          'packages/cli-kit/src/b.ts': "import { startDouble } from '@prazo/lab';",
          'packages/cli-kit/src/format.ts': "import { InvalidInputError } from 'prazo';",
        },
        entries,
      ),
    ).toEqual([
      "packages/cli-kit/src/a.ts imports src/errors.js past the library's entry points (import prazo or a subpath)",
      'packages/cli-kit/src/b.ts imports the lab (@prazo/lab)',
      'packages/cli-kit/src/format.ts imports prazo: library modules bundle it, so it imports nothing',
    ]);
  });

  it('lets the library’s CLI import the kit, the rest of the library only its leaves, and no path', () => {
    expect(KIT_LEAVES['@prazo/cli-kit/format']).toBe('packages/cli-kit/src/format.ts');
    expect(
      libraryImportsOfKit({
        'src/cli/run.ts': "import { createCli } from '@prazo/cli-kit';",
        'src/engine/ledger.ts': "import { formatMs } from '@prazo/cli-kit/format';",
        'src/engine/ledger.test.ts': "import { captureCli } from '@prazo/cli-kit/capture';",
        'src/engine/a.ts': "import { EXIT } from '@prazo/cli-kit';",
        'src/cli/b.ts': "import { EXIT } from '../../packages/cli-kit/src/command.js';",
      }),
    ).toEqual([
      'src/engine/a.ts imports @prazo/cli-kit: outside src/cli/ only @prazo/cli-kit/format (they import nothing)',
      'src/cli/b.ts imports the kit by a path (../../packages/cli-kit/src/command.js; import @prazo/cli-kit)',
    ]);
  });

  it('catches a private workspace named in any dependency list of the published package.json', () => {
    const privateNames = ['@prazo/lab', '@prazo/cli-kit'];
    expect(manifestProblems({ dependencies: { undici: '7.30.2' } }, privateNames)).toEqual([]);
    expect(
      manifestProblems(
        { dependencies: { '@prazo/cli-kit': '0.0.0' }, devDependencies: { '@prazo/lab': '*' } },
        privateNames,
      ),
    ).toEqual([
      'package.json: dependencies names @prazo/cli-kit, a private workspace that is never published',
      'package.json: devDependencies names @prazo/lab, a private workspace that is never published',
    ]);
    const root = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(manifestProblems(root, privateNames)).toEqual([]);
    expect(root.workspaces).toContain('packages/cli-kit');
  });
});
