/**
 * The lab's side of `npm run imports`: lab/ is a package of its own (a workspace, never published)
 * that uses the library only through its entry points, and the library never imports it.
 */
import { dirname, join, normalize } from 'node:path';

/** Every module specifier a file names: static and dynamic imports, re-exports, `vi.mock`, `typeof import`. */
export function specifiersOf(text: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|(?:import|vi\.mock)\(\s*['"]([^'"]+)['"]/gm;
  for (const match of text.matchAll(pattern)) found.push((match[1] ?? match[2] ?? match[3])!);
  return found;
}

/** Test files and test helpers of the lab, which may also use the repository's shared test helpers. */
const isTestFile = (file: string) => /\.test(?:-helper)?\.ts$/.test(file) || file.startsWith('lab/test/');

/**
 * What a lab file imports against the rules: a relative path out of lab/ (a deep import into the
 * library's src/, or anything else of the repository — but for a test file, the shared test helpers
 * under test/), or a `prazo/…` specifier that is not one of the library's entry points.
 *
 * @param files the lab's files by path from the repository's root (`lab/src/…`), with their text
 * @param entries the library's entry specifiers (`prazo`, `prazo/http`, …)
 * @param known deep imports allowed for now, `file => target`, each with what it needs to go
 */
export function labImportProblems(
  files: Readonly<Record<string, string>>,
  entries: readonly string[],
  known: Readonly<Record<string, string>> = {},
): { problems: string[]; known: string[]; stale: string[] } {
  const problems: string[] = [];
  const seen: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    for (const specifier of specifiersOf(text)) {
      if (specifier.startsWith('.')) {
        const target = normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/');
        if (target.startsWith('lab/')) continue;
        if (isTestFile(file) && target.startsWith('test/')) continue;
        const key = `${file} => ${target}`;
        if (known[key] !== undefined) seen.push(key);
        else
          problems.push(
            `${file} imports ${target} past the library's entry points (import prazo or a subpath)`,
          );
      } else if (/^prazo(?:\/|$)/.test(specifier) && specifier !== 'prazo/package.json') {
        if (!entries.includes(specifier))
          problems.push(`${file} imports ${specifier}, which is not an entry point of prazo`);
      }
    }
  }
  const stale = Object.keys(known).filter((key) => !seen.includes(key));
  return { problems, known: seen.map((key) => `${key} (${known[key]})`), stale };
}

/** Library files (src/, tests aside) that import the lab: the library sits below it. */
export function libraryImportsOfLab(files: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (isTestFile(file)) continue;
    for (const specifier of specifiersOf(text)) {
      const target = specifier.startsWith('.') ? normalize(join(dirname(file), specifier)) : specifier;
      if (/^@prazo\/lab(?:\/|$)/.test(target) || target.startsWith('lab/'))
        problems.push(`${file} imports the lab (${specifier})`);
    }
  }
  return problems;
}
