/**
 * Writes docs/fault-matrix.md from the table in test/faults/matrix.ts.
 *
 *   npx tsx test/faults/render-table.ts          # the expected table (what the test asserts)
 *   npx tsx test/faults/render-table.ts --run    # also runs every cell and records what was observed
 *
 * test/faults/fault-matrix.test.ts checks that the doc holds the current expected table.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  ALLOWANCE_MS,
  FAULT_MATRIX,
  formatSeen,
  MATRIX_CLIENT,
  MAX_ROUNDS,
  REQUEST_KINDS,
  STALL_MS,
} from './matrix.js';
import type { CellResult } from './run-cell.js';

const HEDGE = ['off', 'on'] as const;

/** The expected table: one line per fault × request kind, hedging off / on side by side. */
export function renderExpectedTable(): string {
  const lines = [
    '| fault | where | request | outcome (hedge off / on) | servers saw (off / on) | elapsed ≤ |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of FAULT_MATRIX) {
    const deadline = row.userDeadlineMs ?? MATRIX_CLIENT.userDeadlineMs;
    for (const kind of REQUEST_KINDS) {
      const [off, on] = [row.expect(kind, false), row.expect(kind, true)];
      const outcome = off.outcome === on.outcome ? off.outcome : `${off.outcome} / ${on.outcome}`;
      const seen =
        formatSeen(off.seen) === formatSeen(on.seen)
          ? formatSeen(off.seen)
          : `${formatSeen(off.seen)} / ${formatSeen(on.seen)}`;
      const bound = Math.min(Math.max(off.maxElapsedMs, on.maxElapsedMs), deadline);
      const min = off.minElapsedMs === undefined ? '' : ` (≥ ${off.minElapsedMs} ms)`;
      lines.push(
        `| ${row.fault} | ${row.where} | ${kind === 'POST+key' ? 'POST + Idempotency-Key' : kind} | \`${outcome}\` | ${seen} | ${bound} ms${min} |`,
      );
    }
  }
  return lines.join('\n');
}

function renderWhy(): string {
  return FAULT_MATRIX.map((row) => `- **${row.fault}** — ${row.why}`).join('\n');
}

function renderObserved(results: ReadonlyMap<string, CellResult[]>): string {
  const lines = [
    '| fault | request | hedge | outcome | servers saw (instance 0 + 1) | elapsed | attempts (client history) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of FAULT_MATRIX) {
    for (const cell of results.get(row.id) ?? []) {
      lines.push(
        `| ${row.fault} | ${cell.kind} | ${HEDGE[Number(cell.hedge)]} | \`${cell.outcome}\` | ${cell.seen} (${cell.seenBy.join(' + ')}) | ${Math.round(cell.elapsedMs)} ms | ${cell.attempts.join(', ')} |`,
      );
    }
  }
  return lines.join('\n');
}

export function renderDocument(observed?: {
  results: ReadonlyMap<string, CellResult[]>;
  note: string;
}): string {
  return `# Fault matrix

Every fault the dependency double can produce (see [lab.md](lab.md)) × request kind (GET, POST, POST
with an \`Idempotency-Key\`) × hedging off / on, and what prazo's client does in each cell. The table
is \`test/faults/matrix.ts\`; \`test/faults/fault-matrix.test.ts\` runs every cell against two real
doubles on 127.0.0.1 (part of \`npm test\`, so of \`.ci/run\`) and this page is written from the same
table by \`npx tsx test/faults/render-table.ts --run\`.

Every cell: a fresh \`dependency()\` over two instances, \`latency: { p99Ms: ${MATRIX_CLIENT.p99Ms} }\` (connect and read
timeouts ${MATRIX_CLIENT.readMs} ms), ${MATRIX_CLIENT.attempts} attempts, deadline ${MATRIX_CLIENT.userDeadlineMs} ms unless the row says otherwise, hedging at a
fixed ${MATRIX_CLIENT.hedgeAtMs} ms when on. Its first attempt goes to instance 0.

- **outcome** — \`status N\`: the call resolved with that status and its body was read; \`status N,
  body cut\`: it resolved, then reading the body failed; \`error CODE\`: it rejected with that \`code\`.
- **servers saw** — requests received by the two instances together (exact, or min–max).
- **elapsed ≤** — bound on the call, body included, never past the deadline; the test adds
  ${ALLOWANCE_MS} ms for scheduling on a loaded machine. A row whose mismatching cells all saw an event-loop
  stall of ${STALL_MS} ms or more is run again (at most ${MAX_ROUNDS} rounds); any other mismatch fails.
- A POST without a key is never received twice, except after a 429 (a refusal before any work)
  or when its first attempt never reached a server (refused, connect timeout, DNS): then instance 0
  saw nothing and instance 1 received it once. The test asserts this in every cell, and that no
  \`Idempotency-Key\` was seen twice except on the keyed POST.

## Expected

${renderExpectedTable()}

## Why

${renderWhy()}
${
  observed === undefined
    ? ''
    : `
## Observed

${observed.note}

${renderObserved(observed.results)}
`
}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL('../../docs/fault-matrix.md', import.meta.url));
  let observed: Parameters<typeof renderDocument>[0];
  if (process.argv.includes('--run')) {
    const { runRow, warmUp } = await import('./run-cell.js');
    await warmUp();
    const results = new Map<string, CellResult[]>();
    for (const row of FAULT_MATRIX) results.set(row.id, await runRow(row));
    observed = {
      results,
      note: `One run of every cell, one row at a time (\`npx tsx test/faults/render-table.ts --run\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${process.platform}).`,
    };
  }
  await writeFile(target, renderDocument(observed));
  process.stdout.write(`wrote ${target}\n`);
}
