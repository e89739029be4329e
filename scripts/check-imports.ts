/**
 * Checks prazo's import structure and draws it, from the import statements of `src/` (type imports
 * included; tests excluded) and of the lab (lab/, a workspace):
 * - no import circle in `src/`;
 * - the library never imports the lab, and the lab imports the library only by its entry points
 *   (`prazo`, `prazo/http`, …: scripts/library-entries.ts), never a path into `src/` — but for the
 *   known exceptions listed in {@link KNOWN_LAB_DEEP} (scripts/lab-imports.ts);
 * - the kit (`@prazo/cli-kit`, packages/cli-kit) follows the lab's rules and never imports the lab;
 *   the library imports it by name, outside src/cli/ only its import-free subpaths; and package.json
 *   names no private workspace in a dependency list (tsup bundles the kit);
 * - every folder sits in a layer declared in docs/architecture.md ("Layers") and imports only from
 *   its own layer or below, and no folders import each other in a circle — but for the known
 *   exceptions listed in {@link KNOWN_UPWARD}, reported apart (scripts/folder-layers.ts);
 * - the folder-level picture in docs/architecture.md, and the imports column of its Folders table,
 *   are the ones the code draws;
 * - importing prazo changes nothing global: only src/transport/undici-module.ts loads undici (other
 *   modules import its types only), and no module imports `node:http` for more than its types (an
 *   ES module importing it loads Node's bundled undici, which sets the global dispatcher).
 *
 *   node --import tsx scripts/check-imports.ts           check; exit 1 on a violation
 *   node --import tsx scripts/check-imports.ts --write   also rewrite the picture in the docs
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import madge from 'madge';
import {
  checkFolders,
  type EdgeKey,
  folderEdges,
  parseLayers,
  syncFolderTable,
  unitOf,
} from './folder-layers.js';
import {
  KIT,
  kitImportProblems,
  labImportProblems,
  libraryImportsOfKit,
  libraryImportsOfLab,
  manifestProblems,
} from './lab-imports.js';
import { LIBRARY_ENTRIES, specifierOf } from './library-entries.js';

const DOC = 'docs/architecture.md';
const BEGIN = '<!-- import-graph:begin (npm run imports -- --write) -->';
const END = '<!-- import-graph:end -->';
const LAYERS_BEGIN = '<!-- layers:begin -->';
const TABLE_HEADER = '| folder ';
const LAYERS_END = '<!-- layers:end -->';

/**
 * Imports against the declared layers that the code has today, each with what it needs to go: the
 * check reports them as known instead of failing, and fails on any other. Remove an entry once its
 * import is gone (the check then names it as stale).
 */
const KNOWN_UPWARD: Record<EdgeKey, string> = {};

/**
 * Imports of the lab that reach past the library's entry points, each with what it needs to go (the
 * check fails on any other, and names an entry whose import is gone).
 */
const KNOWN_LAB_DEEP: Record<string, string> = {
  // A test: the waterfall drawn from a real ledger, made by a dependency over the library's fake
  // transport and fake clock (src/testing/test-dependency.ts), which no entry point exports.
  'lab/src/drill/waterfall/waterfall.test.ts => src/testing/test-dependency.js':
    "the library's test dependency, not an entry point",
};

/** The TypeScript files under `dir` (no node_modules, no build), by path from the repository's root. */
async function sources(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name).split('\\').join('/');
    if (!entry.isFile() || !path.endsWith('.ts') || /(?:^|\/)(?:node_modules|dist)\//.test(path)) continue;
    files[path] = await readFile(path, 'utf8');
  }
  return files;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}

/** The names of the repository's private workspaces (package.json's `workspaces`). */
async function privateWorkspaces(): Promise<string[]> {
  const names: string[] = [];
  for (const folder of ((await readJson('package.json')).workspaces as string[] | undefined) ?? []) {
    const manifest = await readJson(join(folder, 'package.json'));
    if (manifest.private === true) names.push(String(manifest.name));
  }
  return names;
}

/** Folder-level edges, as a Mermaid flowchart (sorted, so the text is stable). */
function drawFolders(graph: Record<string, string[]>): string {
  const edges = new Set<string>();
  for (const [file, deps] of Object.entries(graph)) {
    const from = unitOf(file);
    for (const dep of deps) {
      const to = unitOf(dep);
      if (to !== from) edges.add(`  ${from.replace('.', '_')} --> ${to.replace('.', '_')}`);
    }
  }
  return ['```mermaid', 'flowchart LR', ...[...edges].sort(), '```'].join('\n');
}

/** Modules allowed to load a module whose loading changes the process, each with the reason. */
const LOADERS: Record<string, string> = {
  undici: 'transport/undici-module.ts', // loads prazo's copy with the global dispatcher slots held
  'node:http': '', // none: `process.getBuiltinModule('node:http')` where a value is needed (as lab/src/http-module.ts does)
};

/** Imports (other than `import type`) of the modules in {@link LOADERS} outside their one loader. */
async function sideEffectImports(files: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const file of files) {
    const text = await readFile(`src/${file}`, 'utf8');
    for (const [specifier, loader] of Object.entries(LOADERS)) {
      if (file === loader) continue;
      const quoted = `['"]${specifier}['"]`;
      const value = new RegExp(
        `^\\s*(?:import|export)\\s+(?!type\\s)[^;]*?from\\s*${quoted}|^\\s*import\\s*${quoted}|(?:require|import)\\(\\s*${quoted}\\s*\\)`,
        'm',
      );
      if (value.test(text))
        problems.push(
          `${file} loads ${specifier} at import (${loader ? `only ${loader} may` : 'no module may'}; types: \`import type\`)`,
        );
    }
  }
  return problems;
}

async function main(): Promise<number> {
  const result = await madge('src', {
    fileExtensions: ['ts'],
    tsConfig: 'tsconfig.json',
    excludeRegExp: [/\.test\.ts$/, /\.test-helper\.ts$/, /\.d\.ts$/],
  });
  // Only src/ itself: test helpers elsewhere that src's test files import are not part of it.
  const inside = (file: string) => !file.startsWith('../');
  const graph = Object.fromEntries(
    Object.entries(result.obj())
      .filter(([file]) => inside(file))
      .map(([file, deps]) => [file, deps.filter(inside)]),
  );
  const problems: string[] = [];
  for (const circle of result.circular()) problems.push(`import circle: ${circle.join(' → ')}`);
  problems.push(...libraryImportsOfLab(await sources('src')));
  const entries = Object.keys(LIBRARY_ENTRIES).map(specifierOf);
  const lab = labImportProblems(await sources('lab'), entries, KNOWN_LAB_DEEP);
  problems.push(...lab.problems);
  problems.push(...kitImportProblems(await sources(KIT.home.slice(0, -1)), entries));
  problems.push(...libraryImportsOfKit(await sources('src')));
  problems.push(...manifestProblems(await readJson('package.json'), await privateWorkspaces()));
  problems.push(...(await sideEffectImports(Object.keys(graph))));
  const doc = await readFile(DOC, 'utf8');
  const layers = parseLayers(doc, LAYERS_BEGIN, LAYERS_END);
  if (layers.size === 0) problems.push(`${DOC}: the layers table (${LAYERS_BEGIN}) is missing`);
  const edges = folderEdges(graph);
  const folders = checkFolders(edges, layers, KNOWN_UPWARD);
  problems.push(...folders.problems);
  const write = process.argv.includes('--write');
  const table = syncFolderTable(doc, edges, TABLE_HEADER);
  for (const unit of table.missing) problems.push(`${DOC}: the Folders table has no row for ${unit}`);
  if (table.stale.length > 0 && !write)
    problems.push(
      `${DOC}: the Folders table's imports are stale for ${table.stale.join(', ')} (npm run imports -- --write)`,
    );
  let text = table.text;
  const picture = drawFolders(graph);
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin === -1 || end < begin) problems.push(`${DOC}: the markers of the import picture are missing`);
  else if (text.slice(begin + BEGIN.length, end).trim() !== picture) {
    if (write) text = `${text.slice(0, begin + BEGIN.length)}\n${picture}\n${text.slice(end)}`;
    else problems.push(`${DOC}: the import picture is stale (npm run imports -- --write)`);
  }
  if (write && text !== doc) {
    await writeFile(DOC, text);
    console.log(`${DOC}: import picture and Folders table rewritten`);
  }
  console.log(`${Object.keys(graph).length} source files read`);
  if (folders.known.length > 0) {
    console.log(`known upward imports (${folders.known.length}, listed in scripts/check-imports.ts):`);
    for (const known of folders.known) console.log(`  ${known}`);
  }
  for (const stale of folders.stale)
    console.log(`no longer imported, remove its entry from KNOWN_UPWARD: ${stale}`);
  if (lab.known.length > 0) {
    console.log(`known deep imports of the lab (${lab.known.length}, listed in scripts/check-imports.ts):`);
    for (const known of lab.known) console.log(`  ${known}`);
  }
  for (const stale of lab.stale)
    console.log(`no longer imported, remove its entry from KNOWN_LAB_DEEP: ${stale}`);
  for (const problem of problems) console.error(problem);
  if (problems.length === 0)
    console.log(
      'imports: no circle, the lab and the kit on the entry points of the library (which never imports the lab, and the kit only as allowed), folders in their layers with no circle, undici loaded only by its loader, picture current',
    );
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = await main();
