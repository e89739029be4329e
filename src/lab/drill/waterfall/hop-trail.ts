import type { IncomingMessage } from 'node:http';
import type { Deadline } from '../../../deadline/deadline.js';
import { formatMs } from '../../../engine/ledger.js';
import { DEADLINE_HEADER } from '../../../wire/deadline-header.js';
import { createWaterfallSampler, type WaterfallSampler, type WaterfallSamples } from './sampler.js';
import { joinTrail, parseTrail, type TrailSpan } from './trail.js';
import { buildWaterfall, type WaterfallPick } from './waterfall.js';

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
const deadlineOf = (req: IncomingMessage): Deadline | undefined => (req as { deadline?: Deadline }).deadline;

/** When the service answers: right after its call, or when its pool refused the request. */
const answeredMs = (times: HopTimes) => (times.callEndMs >= 0 ? times.callEndMs : times.slotMs);

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

/** " DEADLINE_INSUFFICIENT" when a failed call's short body names a prazo error code, else ''. */
function errorCodeOf(call: CallAccount): string {
  if (call.status < 500 || call.body === undefined || call.body.length > 200) return '';
  const code = /"error":"([A-Z_]{3,40})"/.exec(call.body)?.[1];
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

/**
 * The gateway's sampling of /checkout waterfalls (see {@link WaterfallSampler}): each /checkout that
 * ends is offered with a count and a comparison; only one the sampler picks is turned into a
 * waterfall (its trail parsed, its spans laid out).
 */
export interface CheckoutSampling {
  /** A /checkout ended (answered right after its call, or refused by the pool: `call` null). */
  ended(
    req: IncomingMessage,
    variant: string,
    status: number,
    times: HopTimes,
    call: CallAccount | null,
  ): void;
  /** {@link CheckoutSampling.ended} for a /checkout answered after its call, its times as numbers. */
  offer(
    req: IncomingMessage,
    variant: string,
    status: number,
    receivedMs: number,
    slotMs: number,
    callStartMs: number,
    callEndMs: number,
    call: CallAccount,
  ): void;
  peek(): WaterfallSamples;
  take(): WaterfallSamples;
  reset(): void;
}

/** The sampling of a gateway of configuration `config` (`random`: the failing reservoir's draws). */
export function createCheckoutSampling(
  config: string,
  hop: string,
  random: () => number = Math.random,
): CheckoutSampling {
  const sampler: WaterfallSampler = createWaterfallSampler(random);
  /** Counts the /checkout; says whether it is to be kept (and which), without allocating. */
  const consider = (req: IncomingMessage, status: number, receivedMs: number, nowMs: number) => {
    const header = req.headers[DEADLINE_HEADER];
    const userDeadline = typeof header === 'string' ? Number(header) : Number.NaN;
    // A success as the user sees it: a 200 before the user gave up (the drill's goodput).
    const ok = status === 200 && !(nowMs > userDeadline);
    return sampler.consider(ok, nowMs - receivedMs);
  };
  const keep = (
    pick: WaterfallPick,
    req: IncomingMessage,
    variant: string,
    status: number,
    times: HopTimes,
    call: CallAccount | null,
  ) => {
    const nowMs = answeredMs(times);
    const header = req.headers[DEADLINE_HEADER];
    const userDeadline = typeof header === 'string' && /^\d{1,16}$/.test(header) ? Number(header) : null;
    const deadline = deadlineOf(req);
    sampler.keep(
      pick,
      buildWaterfall({
        config,
        pick,
        variant,
        status,
        receivedAtMs: times.receivedMs,
        answeredAtMs: nowMs,
        userDeadlineEpochMs: userDeadline,
        limitEpochMs: deadline === undefined ? null : deadline.limitMs,
        spans: [...ownSpans(hop, false, req, times, call), ...parseTrail(call?.trail)],
        candidates: 0,
      }),
    );
  };
  return {
    ended(req, variant, status, times, call) {
      const pick = consider(req, status, times.receivedMs, answeredMs(times));
      if (pick !== null) keep(pick, req, variant, status, times, call);
    },
    offer(req, variant, status, receivedMs, slotMs, callStartMs, callEndMs, call) {
      const pick = consider(req, status, receivedMs, callEndMs);
      if (pick !== null)
        keep(pick, req, variant, status, { receivedMs, slotMs, callStartMs, callEndMs }, call);
    },
    peek: () => sampler.peek(),
    take: () => sampler.take(),
    reset: () => sampler.reset(),
  };
}
