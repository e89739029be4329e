/**
 * Checks prazo's import structure and draws it, from the import statements of `src/` (type imports
 * included; tests excluded):
 * - no import circle in `src/` outside `lab/`;
 * - nothing outside `lab/` and `cli/` imports `lab/` (the lab sits above the library);
 * - the folder-level picture in docs/architecture.md is the one the code draws;
 * - importing prazo changes nothing global: only src/transport/undici-module.ts loads undici (other
 *   modules import its types only), and no module imports `node:http` for more than its types (an
 *   ES module importing it loads Node's bundled undici, which sets the global dispatcher).
 *
 *   node --import tsx scripts/check-imports.ts           check; exit 1 on a violation
 *   node --import tsx scripts/check-imports.ts --write   also rewrite the picture in the docs
 */
import { readFile, writeFile } from 'node:fs/promises';
import madge from 'madge';

const DOC = 'docs/architecture.md';
const BEGIN = '<!-- import-graph:begin (npm run imports -- --write) -->';
const END = '<!-- import-graph:end -->';

/** The folder (or top-level file, without `.ts`) a source path belongs to. */
function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file.replace(/\.ts$/, '') : file.slice(0, slash);
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
  'node:http': '', // none: `process.getBuiltinModule('node:http')` where a value is needed (lab/http-module.ts)
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
  for (const circle of result.circular()) {
    if (circle.some((file) => !file.startsWith('lab/')))
      problems.push(`import circle: ${circle.join(' → ')}`);
  }
  for (const [file, deps] of Object.entries(graph)) {
    if (file.startsWith('lab/') || file.startsWith('cli/')) continue;
    for (const dep of deps) if (dep.startsWith('lab/')) problems.push(`${file} imports the lab (${dep})`);
  }
  problems.push(...(await sideEffectImports(Object.keys(graph))));
  const picture = drawFolders(graph);
  const doc = await readFile(DOC, 'utf8');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin === -1 || end < begin) problems.push(`${DOC}: the markers of the import picture are missing`);
  else {
    const current = doc.slice(begin + BEGIN.length, end).trim();
    if (current !== picture) {
      if (process.argv.includes('--write')) {
        await writeFile(DOC, `${doc.slice(0, begin + BEGIN.length)}\n${picture}\n${doc.slice(end)}`);
        console.log(`${DOC}: import picture rewritten`);
      } else problems.push(`${DOC}: the import picture is stale (npm run imports -- --write)`);
    }
  }
  console.log(`${Object.keys(graph).length} source files read`);
  for (const problem of problems) console.error(problem);
  if (problems.length === 0)
    console.log(
      'imports: no circle outside lab/, lab/ imported only by cli/, undici loaded only by its loader, picture current',
    );
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = await main();
