/**
 * Rows as a plain-text table: the first row is the header, then a rule as wide as the table; the
 * first column left-aligned, the others right-aligned, two spaces apart. Used by the drill's reports.
 */
export function textTable(rows: readonly (readonly string[])[]): string[] {
  const header = rows[0];
  if (header === undefined) return [];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[i]!))).join('  ');
  return [
    line(header),
    '-'.repeat(widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1)),
    ...rows.slice(1).map(line),
  ];
}
