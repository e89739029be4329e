import type { IncomingMessage } from 'node:http';
import { DEADLINE_HEADER } from 'prazo/wire';
import { answeredMs, type CallAccount, deadlineOf, type HopTimes, ownSpans } from './hop-trail.js';
import { createWaterfallSampler, type WaterfallSampler, type WaterfallSamples } from './sampler.js';
import { epochNow, parseTrail } from './trail.js';
import { buildWaterfall, type WaterfallPick } from './waterfall.js';

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
  /** Forgets what was sampled, and every /checkout received until now (they may still end later). */
  reset(): void;
}

/** The sampling of a gateway of configuration `config` (`random`: the failing reservoir's draws). */
export function createCheckoutSampling(
  config: string,
  hop: string,
  random: () => number = Math.random,
): CheckoutSampling {
  const sampler: WaterfallSampler = createWaterfallSampler(random);
  let sinceMs = Number.NEGATIVE_INFINITY;
  /** Counts the /checkout; says whether it is to be kept (and which), without allocating. */
  const consider = (req: IncomingMessage, status: number, receivedMs: number, nowMs: number) => {
    if (receivedMs < sinceMs) return null;
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
    reset() {
      sampler.reset();
      sinceMs = epochNow();
    },
  };
}
