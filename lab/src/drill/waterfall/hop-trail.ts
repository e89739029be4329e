import type { IncomingMessage } from 'node:http';
import { formatMs } from '@prazo/cli-kit/format';
import type { Deadline } from 'prazo';
import { joinTrail, type TrailSpan } from './trail.js';

/** When a service of the chain handled one request, in epoch ms (see `epochNow`); -1 where it did not get that far. */
export interface HopTimes {
  receivedMs: number;
  /** The shop's pool slot was granted (or refused). */
  slotMs: number;
  /** The call to the next service started and ended (the service answers at once after it). */
  callStartMs: number;
  callEndMs: number;
}

/** What a service's call to the next one said of where its time went. */
export interface CallAccount {
  status: number;
  /** The answer's body (a failure's names its error code: `{"error":"DEADLINE_INSUFFICIENT"}`). */
  body?: string;
  /** The trail the next service answered with (`x-drill-trail`), as received. */
  trail?: unknown;
  /** The edge: its client's own spans (prazo's ledger, or the attempts a peer reported). */
  spans?: TrailSpan[] | undefined;
}

/** The deadline a prazo server adapter put on the request (absent in the other configurations). */
export const deadlineOf = (req: IncomingMessage): Deadline | undefined =>
  (req as { deadline?: Deadline }).deadline;

/** When the service answers: right after its call, or when its pool refused the request. */
export const answeredMs = (times: HopTimes) => (times.callEndMs >= 0 ? times.callEndMs : times.slotMs);

/**
 * This service's own spans for a request it is answering: its time with the request (with
 * the time that was left of prazo's deadline on arrival), the shop's wait for a pool slot, and its
 * call to the next service — the edge's client's own spans instead, when it has them; without them
 * the edge's one call is its one attempt.
 */
export function ownSpans(
  hop: string,
  edge: boolean,
  req: IncomingMessage,
  times: HopTimes,
  call: CallAccount | null,
): TrailSpan[] {
  const deadline = deadlineOf(req);
  const nowMs = answeredMs(times);
  const spans: TrailSpan[] = [
    {
      hop,
      kind: 'hop',
      startMs: times.receivedMs,
      durationMs: nowMs - times.receivedMs,
      note: deadline === undefined ? '' : `${formatMs(deadline.limitMs - times.receivedMs)} left on arrival`,
    },
  ];
  if (times.slotMs >= 0 && times.slotMs - times.receivedMs >= 0.05)
    spans.push({
      hop,
      kind: 'pool',
      startMs: times.receivedMs,
      durationMs: times.slotMs - times.receivedMs,
      note: call === null ? 'refused' : '',
    });
  if (call !== null && times.callStartMs >= 0) {
    if (call.spans !== undefined && call.spans.length > 0) spans.push(...call.spans);
    else if (call.spans !== undefined)
      // A client that keeps a trace but reported no attempt: it refused the call itself (an open
      // breaker), or an attempt it abandoned had not ended yet.
      spans.push({
        hop,
        kind: 'error',
        startMs: times.callEndMs,
        durationMs: 0,
        note: `${call.status}${errorCodeOf(call)}; no attempt reported`,
      });
    else
      spans.push({
        hop,
        kind: edge ? 'attempt' : 'call',
        startMs: times.callStartMs,
        durationMs: times.callEndMs - times.callStartMs,
        note: `${edge ? '#1 original ' : ''}${call.status}${errorCodeOf(call)}`,
      });
  }
  return spans;
}

/**
 * " DEADLINE_INSUFFICIENT" when a failed call's short body names an error code (prazo's, or a
 * peer's error name: `BrokenCircuitError`), else ''.
 */
function errorCodeOf(call: CallAccount): string {
  if (call.status < 500 || call.body === undefined || call.body.length > 200) return '';
  const code = /"error":"([A-Za-z_]{3,40})"/.exec(call.body)?.[1];
  return code === undefined ? '' : ` ${code}`;
}

/** The `x-drill-trail` a service answers with: its own spans, then its dependency's trail. */
export function answerTrail(
  hop: string,
  edge: boolean,
  req: IncomingMessage,
  times: HopTimes,
  call: CallAccount | null,
): string {
  return joinTrail(ownSpans(hop, edge, req, times, call), call?.trail);
}
