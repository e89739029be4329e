import type { SpanKind, TrailSpan } from './trail.js';

/** Which /checkout a waterfall shows: a failing one (drawn at random), or the slowest successful one. */
export type WaterfallPick = 'failing' | 'slow';

/** One bar of a waterfall. */
export interface WaterfallRow {
  /** The service it happened in. */
  hop: string;
  kind: SpanKind;
  /** Start, in ms since the gateway received the /checkout. */
  startMs: number;
  durationMs: number;
  note: string;
}

/**
 * Where the deadline of one sampled /checkout went, hop by hop, as the gateway saw it end (plain data:
 * it crosses process boundaries and goes into the `--json` report).
 */
export interface DeadlineWaterfall {
  config: string;
  pick: WaterfallPick;
  /** `hedged` or `unhedged`. */
  variant: string;
  /** What the gateway answered. */
  status: number;
  /** Epoch ms the gateway received it. */
  receivedAtMs: number;
  /** From its arrival at the gateway to the gateway's answer, ms. */
  elapsedMs: number;
  /** The user's deadline (`x-deadline-epoch-ms` as sent), in ms after the arrival; null when absent. */
  userDeadlineMs: number | null;
  /** prazo only: the deadline the gateway honoured (the user's, capped at its own limit), ms after the arrival. */
  limitMs: number | null;
  /**
   * Where the edge's bars come from: `ledger` (prazo's deadline ledger at the edge), or `attempts`
   * (the attempts the edge's client reported, with the kind its attempt header carried, the waits
   * between them inferred gaps; or, for prazo before its edge client is calibrated, its one call).
   */
  source: 'ledger' | 'attempts';
  /** How many /checkouts it was chosen among (failing ones, or successful ones for the slowest). */
  candidates: number;
  /** The drill's phase it was received in, and when (ms since the traffic started); set by the drill. */
  phase?: string;
  tMs?: number;
  rows: WaterfallRow[];
}

/** What the gateway knows of a /checkout once it has answered it. */
export interface WaterfallInput {
  config: string;
  pick: WaterfallPick;
  variant: string;
  status: number;
  /** Epoch ms (same clock as the spans) of the arrival and of the answer. */
  receivedAtMs: number;
  answeredAtMs: number;
  userDeadlineEpochMs: number | null;
  limitEpochMs: number | null;
  /** The gateway's own spans, then the trail its dependency answered with. */
  spans: readonly TrailSpan[];
  candidates: number;
}

/** Most rows a waterfall keeps (a trail is bounded anyway; this bounds what is drawn). */
export const MAX_WATERFALL_ROWS = 40;

const tenth = (value: number) => Math.round(value * 10) / 10;

/** The waterfall of one /checkout: its spans relative to the arrival, in the order they started (hops first on a tie). */
export function buildWaterfall(input: WaterfallInput): DeadlineWaterfall {
  const at = input.receivedAtMs;
  const ordered = input.spans
    .map((span, index) => ({ span, index }))
    .sort((a, b) => a.span.startMs - b.span.startMs || a.index - b.index)
    .slice(0, MAX_WATERFALL_ROWS);
  // `ledgerSpans` ends every attempt's note with the time that was left — the edge's own measure
  // of its one call (prazo's warm-up, before its client is calibrated) does not — and alone marks
  // where prazo's client ended a call with an error, also one it refused before any attempt.
  const usesLedger = input.spans.some(
    (s) =>
      (s.kind === 'attempt' && s.note.endsWith(' left')) || (input.config === 'prazo' && s.kind === 'error'),
  );
  return {
    config: input.config,
    pick: input.pick,
    variant: input.variant,
    status: input.status,
    receivedAtMs: Math.round(at),
    elapsedMs: tenth(input.answeredAtMs - at),
    userDeadlineMs: input.userDeadlineEpochMs === null ? null : tenth(input.userDeadlineEpochMs - at),
    limitMs: input.limitEpochMs === null ? null : tenth(input.limitEpochMs - at),
    source: usesLedger ? 'ledger' : 'attempts',
    candidates: input.candidates,
    rows: ordered.map(({ span }) => ({
      hop: span.hop,
      kind: span.kind,
      startMs: tenth(span.startMs - at),
      durationMs: tenth(span.durationMs),
      note: span.note,
    })),
  };
}

/**
 * `w` with a first row for the time between the user's send and the gateway's arrival, when the
 * user's deadline (`userDeadlineMs` long when sent) shows there was any: time in the load driver,
 * on the network and in the gateway's accept and socket queues, which no service can measure.
 * The user's clock reads whole milliseconds: less than one is no time at all.
 */
export function withTransit(w: DeadlineWaterfall, userDeadlineMs: number): DeadlineWaterfall {
  if (w.userDeadlineMs === null || w.rows[0]?.kind === 'transit') return w;
  const sentMs = tenth(w.userDeadlineMs - userDeadlineMs);
  if (sentMs > -1) return w;
  const transit: WaterfallRow = {
    hop: 'user',
    kind: 'transit',
    startMs: sentMs,
    durationMs: -sentMs,
    note: 'sent, not yet received by the gateway',
  };
  return { ...w, rows: [transit, ...w.rows] };
}

/**
 * One failing and one slow waterfall per configuration for the whole run, from the phases' samples:
 * the slowest of the phases' slowest, and a failing one drawn among the phases' with a weight of the
 * failures each was chosen among — so that each failing /checkout of the run is equally likely, as if
 * one reservoir had been kept over the whole run. `random` decides the draw (the drill's seed).
 */
export function runWaterfalls(
  byPhase: readonly DeadlineWaterfall[],
  configs: readonly string[],
  random: () => number,
): DeadlineWaterfall[] {
  const result: DeadlineWaterfall[] = [];
  for (const config of configs) {
    const own = byPhase.filter((w) => w.config === config);
    const failing = own.filter((w) => w.pick === 'failing');
    const total = failing.reduce((sum, w) => sum + w.candidates, 0);
    if (failing.length > 0 && total > 0) {
      let draw = random() * total;
      let chosen = failing[failing.length - 1]!;
      for (const w of failing) {
        draw -= w.candidates;
        if (draw < 0) {
          chosen = w;
          break;
        }
      }
      result.push({ ...chosen, candidates: total });
    }
    let slowest: DeadlineWaterfall | null = null;
    let successes = 0;
    for (const w of own) {
      if (w.pick !== 'slow') continue;
      successes += w.candidates;
      if (slowest === null || w.elapsedMs > slowest.elapsedMs) slowest = w;
    }
    if (slowest !== null) result.push({ ...slowest, candidates: successes });
  }
  return result;
}
