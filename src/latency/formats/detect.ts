import { extname } from 'node:path';
import type { LatencyFormat } from './types.js';
import { parseDecimal } from './values.js';

/**
 * Guesses the format of a latency file from its name and its first bytes.
 *
 * The extension decides when it is unambiguous (`.csv`/`.tsv` → csv, `.json` → json, `.prom` →
 * prometheus). Otherwise the content does: a first character `{` → json; `# HELP`, `# TYPE` or a
 * `_bucket{` sample → prometheus; a first meaningful line that is a number → lines; a first line with a
 * delimiter (`,`, `;`, tab) or that starts with a word (a header) → csv. Returns `undefined` when nothing matches.
 *
 * @param head - the beginning of the file (a few KB is plenty).
 */
export function detectFormat(path: string, head: string): LatencyFormat | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv' || ext === '.tsv') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.prom' || ext === '.metrics' || ext === '.openmetrics') return 'prometheus';
  const text = head.charCodeAt(0) === 0xfeff ? head.slice(1) : head;
  if (text.trimStart().startsWith('{')) return 'json';
  if (/^# (HELP|TYPE) /m.test(text) || /^[a-zA-Z_:][a-zA-Z0-9_:]*_bucket\{/m.test(text)) return 'prometheus';
  const first = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  if (first === undefined) return undefined;
  if (parseDecimal(first) !== undefined) return 'lines';
  // Not a number but words: a CSV header (a single-column CSV has no delimiter).
  if (/[,;\t]/.test(first) || /^[\p{L}_"]/u.test(first)) return 'csv';
  return undefined;
}
