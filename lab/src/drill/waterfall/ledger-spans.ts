import { formatMs } from '@prazo/cli-kit/format';
import type { DeadlineLedger, LedgerAttempt } from 'prazo';
import type { TrailSpan } from './trail.js';

/**
 * The spans of one prazo call, from its deadline ledger (`response.ledger`, `error.ledger`): the wait
 * for a concurrency slot, every attempt with its phases, the backoff, `Retry-After` and hedge waits,
 * each with the time that was left of the deadline when it started — and, for a call that ended with
 * an error, where it ended and the error's code (`errorCode`). `startMs` is the epoch instant the
 * call started at (the ledger's entries are relative to it).
 */
export function ledgerSpans(
  hop: string,
  ledger: DeadlineLedger,
  startMs: number,
  errorCode: string | null = null,
): TrailSpan[] {
  const spans: TrailSpan[] = [];
  for (const entry of ledger.entries) {
    const left = `${formatMs(entry.leftMs)} left`;
    if (entry.kind === 'attempt') {
      spans.push({
        hop,
        kind: 'attempt',
        startMs: startMs + entry.atMs,
        durationMs: Math.max(0, entry.durationMs),
        note: `${attemptNote(entry)}; ${left}`,
      });
    } else {
      spans.push({
        hop,
        kind: entry.kind,
        startMs: startMs + entry.atMs,
        durationMs: Math.max(0, entry.durationMs),
        note: left,
      });
    }
  }
  if (errorCode !== null)
    spans.push({ hop, kind: 'error', startMs: startMs + ledger.elapsedMs, durationMs: 0, note: errorCode });
  return spans;
}

/** "#2 retry 503 (connect 1 ms, first byte 240 ms)", "#1 original aborted". */
function attemptNote(entry: LedgerAttempt): string {
  const answer = entry.status ?? entry.outcome ?? 'in flight';
  const phases: string[] = [];
  if (entry.connectMs !== undefined && entry.connectMs >= 1)
    phases.push(`connect ${formatMs(entry.connectMs)}`);
  if (entry.firstByteMs !== undefined) phases.push(`first byte ${formatMs(entry.firstByteMs)}`);
  if (entry.bodyMs !== undefined && entry.bodyMs >= 1) phases.push(`body ${formatMs(entry.bodyMs)}`);
  if (entry.remote?.handlerMs !== undefined) phases.push(`its handler ${formatMs(entry.remote.handlerMs)}`);
  return `#${entry.attempt} ${entry.attemptKind} ${answer}${phases.length > 0 ? ` (${phases.join(', ')})` : ''}`;
}
