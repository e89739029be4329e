/**
 * The folder-level rules of `npm run imports` (scripts/check-imports.ts), as pure functions of a
 * file-level import graph: every folder (or top-level file) of `src/` sits in a declared layer
 * (docs/architecture.md, "Layers"), imports only from its own layer or below, and no folders import
 * each other in a circle. Known exceptions are listed, each with its reason, and reported apart.
 */

/** The folder (or top-level file, without `.ts`) a source path belongs to. */
export function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file.replace(/\.ts$/, '') : file.slice(0, slash);
}

/** `from -> to` */
export type EdgeKey = `${string} -> ${string}`;

/** Folder-level edges, each with the file-level imports behind it (`file => dependency`). */
export function folderEdges(graph: Record<string, readonly string[]>): Map<EdgeKey, string[]> {
  const edges = new Map<EdgeKey, string[]>();
  for (const [file, deps] of Object.entries(graph)) {
    const from = unitOf(file);
    for (const dep of deps) {
      const to = unitOf(dep);
      if (to === from) continue;
      const key: EdgeKey = `${from} -> ${to}`;
      const files = edges.get(key) ?? [];
      files.push(`${file} => ${dep}`);
      edges.set(key, files);
    }
  }
  return edges;
}

/**
 * The layers declared in a Markdown table between `begin` and `end` markers: one row per layer,
 * `| 0 | \`clock\`, \`errors\` | … |`, the layer's number first and its folders, in backticks,
 * second (a trailing `/` or `.ts` is dropped). Lower numbers sit below.
 */
export function parseLayers(doc: string, begin: string, end: string): Map<string, number> {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  const layers = new Map<string, number>();
  if (from === -1 || to < from) return layers;
  for (const line of doc.slice(from + begin.length, to).split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const level = Number(cells[1]);
    if (cells.length < 3 || cells[1] === '' || !Number.isInteger(level)) continue;
    for (const [, name] of (cells[2] ?? '').matchAll(/`([^`]+)`/g))
      layers.set(name!.replace(/\/$/, '').replace(/\.ts$/, ''), level);
  }
  return layers;
}

/** The result of {@link checkFolders}. */
export interface FolderCheck {
  /** Violations: a folder without a layer, an upward import not listed, a circle of folders. */
  problems: string[];
  /** Listed exceptions still present, with their reasons. */
  known: string[];
  /** Listed exceptions the code no longer has (their entries can go). */
  stale: string[];
}

/**
 * Checks folder-level edges against the layers: an edge may go to its own layer or below; one that
 * goes up is a problem unless `allowed` lists it. Circles are looked for among the edges not listed,
 * so a circle is caught whether its folders sit in one layer or in several.
 */
export function checkFolders(
  edges: ReadonlyMap<EdgeKey, readonly string[]>,
  layers: ReadonlyMap<string, number>,
  allowed: Readonly<Record<EdgeKey, string>>,
): FolderCheck {
  const problems: string[] = [];
  const known: string[] = [];
  const units = new Set<string>();
  for (const key of edges.keys()) for (const unit of key.split(' -> ')) units.add(unit);
  for (const unit of [...units].sort())
    if (!layers.has(unit)) problems.push(`folder ${unit} has no layer (docs/architecture.md, Layers)`);
  const kept = new Map<string, string[]>();
  for (const [key, files] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
    const [from, to] = key.split(' -> ') as [string, string];
    const upward = (layers.get(to) ?? -1) > (layers.get(from) ?? Number.POSITIVE_INFINITY);
    if (key in allowed) {
      known.push(`${key} (${allowed[key]}): ${files.join(', ')}`);
      continue;
    }
    if (upward)
      problems.push(
        `upward import ${key} (layer ${layers.get(from)} → ${layers.get(to)}): ${files.join(', ')}`,
      );
    kept.set(from, [...(kept.get(from) ?? []), to]);
  }
  for (const circle of circles(kept)) problems.push(`folder circle among ${circle.join(', ')}`);
  const stale = (Object.keys(allowed) as EdgeKey[]).filter((key) => !edges.has(key));
  return { problems, known, stale };
}

/** The strongly connected components of more than one node (Tarjan), each in a stable order. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * The Folders table of docs/architecture.md (`| \`name\` | role | imports (outside itself) |`, from
 * its header row to the first line that is not a row) with each row's imports column set to what
 * the code imports; `stale` names the rows that differed, `missing` the folders with no row.
 */
export function syncFolderTable(
  doc: string,
  edges: ReadonlyMap<EdgeKey, readonly string[]>,
  header: string,
): { text: string; stale: string[]; missing: string[] } {
  const imports = new Map<string, Set<string>>();
  for (const key of edges.keys()) {
    const [from, to] = key.split(' -> ') as [string, string];
    imports.set(from, (imports.get(from) ?? new Set()).add(to));
  }
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  const stale: string[] = [];
  const seen = new Set<string>();
  if (start === -1) return { text: doc, stale: [`the table (${header})`], missing: [] };
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
    const cells = lines[i]!.split('|');
    const name = /`([^`]+)`/.exec(cells[1] ?? '')?.[1];
    if (name === undefined || cells.length < 5) continue;
    const unit = name.replace(/\/$/, '').replace(/\.ts$/, '');
    seen.add(unit);
    const wanted = [...(imports.get(unit) ?? [])].sort().map((to) => `\`${to}\``);
    const cell = wanted.length === 0 ? '—' : wanted.join(', ');
    if (cells[3]!.trim() === cell) continue;
    stale.push(unit);
    cells[3] = ` ${cell} `;
    lines[i] = cells.join('|');
  }
  const missing = [...imports.keys()].filter((unit) => !seen.has(unit)).sort();
  return { text: lines.join('\n'), stale, missing };
}
