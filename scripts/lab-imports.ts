/**
 * The workspaces' side of `npm run imports`: lab/ is a package of its own (a workspace, never
 * published) that uses the library only through its entry points, and the library never imports it;
 * packages/cli-kit (`@prazo/cli-kit`, the same) holds what the library's CLI and the lab's share: it
 * too uses the library only through its entry points, the library's CLI (src/cli/) imports it, and the
 * rest of the library only its import-free subpaths ({@link KIT_LEAVES}), which tsup bundles.
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
 * @param home the package's folder (`lab/`, `packages/cli-kit/`): relative imports stay inside it
 */
export function labImportProblems(
  files: Readonly<Record<string, string>>,
  entries: readonly string[],
  known: Readonly<Record<string, string>> = {},
  home = 'lab/',
): { problems: string[]; known: string[]; stale: string[] } {
  const problems: string[] = [];
  const seen: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    for (const specifier of specifiersOf(text)) {
      if (specifier.startsWith('.')) {
        const target = normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/');
        if (target.startsWith(home)) continue;
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

/** The kit's package name, and its folder in the repository. */
export const KIT = { name: '@prazo/cli-kit', home: 'packages/cli-kit/' } as const;

/**
 * The kit's subpaths that any library module may import, each with its file: they import nothing, so
 * the library's build bundles them whole and no published file reaches the kit or back into prazo.
 */
export const KIT_LEAVES: Readonly<Record<string, string>> = {
  '@prazo/cli-kit/format': 'packages/cli-kit/src/format.ts',
};

/**
 * What the kit's files import against the rules: the lab's rules (its own files, the library's entry
 * points; in tests also the shared test helpers), never the lab, and nothing at all in a leaf
 * ({@link KIT_LEAVES}).
 */
export function kitImportProblems(
  files: Readonly<Record<string, string>>,
  entries: readonly string[],
): string[] {
  const problems = labImportProblems(files, entries, {}, KIT.home).problems;
  const leaves = Object.values(KIT_LEAVES);
  for (const [file, text] of Object.entries(files)) {
    for (const specifier of specifiersOf(text)) {
      if (/^@prazo\/lab(?:\/|$)/.test(specifier)) problems.push(`${file} imports the lab (${specifier})`);
      if (leaves.includes(file))
        problems.push(`${file} imports ${specifier}: library modules bundle it, so it imports nothing`);
    }
  }
  return problems;
}

/**
 * Library files (src/, tests aside) that import the kit against the rules: by a path (its package
 * name only), or, outside the library's CLI (src/cli/), anything but a leaf ({@link KIT_LEAVES}).
 */
export function libraryImportsOfKit(files: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (isTestFile(file)) continue;
    for (const specifier of specifiersOf(text)) {
      const target = specifier.startsWith('.')
        ? normalize(join(dirname(file), specifier))
            .split('\\')
            .join('/')
        : specifier;
      if (target.startsWith(KIT.home))
        problems.push(`${file} imports the kit by a path (${specifier}; import ${KIT.name})`);
      else if (
        (target === KIT.name || target.startsWith(`${KIT.name}/`)) &&
        !file.startsWith('src/cli/') &&
        KIT_LEAVES[target] === undefined
      )
        problems.push(
          `${file} imports ${specifier}: outside src/cli/ only ${Object.keys(KIT_LEAVES).join(', ')} (they import nothing)`,
        );
    }
  }
  return problems;
}

/**
 * The library's package.json naming a private workspace (the lab, the kit) in a dependency list: it is
 * published as it is, so it would ask for a package no registry has (tsup bundles the kit instead).
 */
export function manifestProblems(
  manifest: Readonly<Record<string, unknown>>,
  privateNames: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    const names = Object.keys((manifest[field] as Record<string, string> | undefined) ?? {});
    for (const name of names.filter((n) => privateNames.includes(n)))
      problems.push(`package.json: ${field} names ${name}, a private workspace that is never published`);
  }
  return problems;
}
