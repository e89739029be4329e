import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ALLOWANCE_MS,
  FAULT_MATRIX,
  type FaultRow,
  formatSeen,
  MATRIX_CLIENT,
  MAX_ROUNDS,
  STALL_MS,
} from './matrix.js';
import { renderExpectedTable } from './render-table.js';
import { type CellResult, runRow, warmUp } from './run-cell.js';

// Rows run a few at a time (each has its own pair of doubles); the cells of a row run in order.
const BATCH = 4;
const firstRounds = new Map<string, Promise<CellResult[]>>();
function firstRound(row: FaultRow): Promise<CellResult[]> {
  if (!firstRounds.has(row.id)) {
    const index = FAULT_MATRIX.indexOf(row);
    const batchStart = index - (index % BATCH);
    for (const r of FAULT_MATRIX.slice(batchStart, batchStart + BATCH)) {
      if (!firstRounds.has(r.id)) firstRounds.set(r.id, runRow(r));
    }
  }
  return firstRounds.get(row.id)!;
}

/** Faults where the first attempt never reached a server: only then may a POST be sent twice. */
const NEVER_REACHED = new Set(['refused', 'connect-timeout', 'dns']);

/** What is wrong with one cell, as sentences (empty when the cell holds). */
function mismatches(row: FaultRow, cell: CellResult): string[] {
  const expected = row.expect(cell.kind, cell.hedge);
  const deadlineMs = row.userDeadlineMs ?? MATRIX_CLIENT.userDeadlineMs;
  const wrong: string[] = [];
  if (cell.outcome !== expected.outcome) wrong.push(`outcome ${cell.outcome}, expected ${expected.outcome}`);
  const [min, max] = typeof expected.seen === 'number' ? [expected.seen, expected.seen] : expected.seen;
  if (cell.seen < min || cell.seen > max)
    wrong.push(`servers saw ${cell.seen}, expected ${formatSeen(expected.seen)}`);
  // Never past the deadline (plus scheduling), whatever the row's own bound.
  const bound = Math.min(expected.maxElapsedMs, deadlineMs) + ALLOWANCE_MS;
  if (cell.elapsedMs > bound) wrong.push(`took ${Math.round(cell.elapsedMs)} ms, bound ${bound} ms`);
  if (expected.minElapsedMs !== undefined && cell.elapsedMs < expected.minElapsedMs)
    wrong.push(`took ${Math.round(cell.elapsedMs)} ms, at least ${expected.minElapsedMs} ms expected`);
  // A write without a key is never received twice, unless the first never reached a server (then
  // the instance that answered received it once) or the server refused it with a 429.
  if (cell.kind === 'POST' && !row.id.startsWith('status-429')) {
    if (cell.seen > 1) wrong.push(`a POST without a key was received ${cell.seen} times`);
    if (NEVER_REACHED.has(row.id) && cell.seenBy[0] !== 0) wrong.push('instance 0 received the POST');
  }
  if (cell.kind !== 'POST+key' && cell.keyRepeats !== 0) wrong.push(`${cell.keyRepeats} key repeats`);
  return wrong.map(
    (w) =>
      `${row.id} ${cell.kind} hedge ${cell.hedge ? 'on' : 'off'}: ${w} [${cell.attempts.join(' ')}; stall ${Math.round(cell.stallMs)} ms]`,
  );
}

describe('fault matrix: every fault × GET, POST, POST with Idempotency-Key × hedging off/on', () => {
  beforeAll(warmUp, 30_000);

  for (const row of FAULT_MATRIX) {
    it(`${row.fault} (${row.where})`, async () => {
      let cells = await firstRound(row);
      for (let round = 1; ; round++) {
        const failing = cells.filter((cell) => mismatches(row, cell).length > 0);
        // Re-run only when every mismatch can be put down to the machine stalling the event loop.
        if (failing.length === 0 || round >= MAX_ROUNDS || failing.some((cell) => cell.stallMs < STALL_MS))
          break;
        cells = await runRow(row);
      }
      expect(cells.flatMap((cell) => mismatches(row, cell))).toEqual([]);
    }, 60_000);
  }

  it('docs/fault-matrix.md holds the current table (npx tsx test/faults/render-table.ts --run)', async () => {
    const doc = await readFile(new URL('../../docs/fault-matrix.md', import.meta.url), 'utf8');
    expect(doc).toContain(renderExpectedTable());
  });

  it('the table covers every fault the double can produce', () => {
    const faults = FAULT_MATRIX.map((row) => row.id);
    for (const id of [
      'refused',
      'connect-timeout',
      'hang',
      'reset-before-headers',
      'reset-mid-body',
      'slow-body',
      'status-500',
      'status-502',
      'status-503',
      'status-504',
      'status-429-short',
      'status-429-long',
      'dns',
    ]) {
      expect(faults).toContain(id);
    }
  });
});
