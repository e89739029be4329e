/**
 * The drill's trail: how the services of one chain tell the gateway where a request's time went below
 * it, so that the gateway can draw the deadline's waterfall of a sampled /checkout. Each service
 * answers its caller with `x-drill-trail`: its own spans (when it received the request, what it
 * waited for, each call or attempt it made) followed by the trail its own dependency answered with.
 *
 * A drill-internal header between processes of one trust domain, on one machine: the instants are
 * epoch milliseconds of that machine's clock (`performance.timeOrigin + performance.now()`), so the
 * services' spans line up to within a millisecond or so. It is bounded and checked like any input:
 * a value longer than {@link MAX_TRAIL_LENGTH} or not made of valid spans is dropped (never throws).
 */

/** Name of the header (lower case, as Node and undici hand headers over). */
export const TRAIL_HEADER = 'x-drill-trail';

/** Longest trail value read or written, in characters. */
export const MAX_TRAIL_LENGTH = 8192;
/** Most spans read from one trail. */
export const MAX_TRAIL_SPANS = 64;

/**
 * What a span of the waterfall is:
 * - `hop`: a service had the request (from its arrival to its answer's headers);
 * - `pool`: the shop waited for a slot of its shared pool;
 * - `call`: one call to the next service (the internal hops make one);
 * - `queue`: prazo's client waited for a slot of the dependency's concurrency limit;
 * - `attempt`: one attempt at the dependency (the edge; `note` says its kind and outcome);
 * - `backoff`, `retry-after`, `hedge-delay`: prazo's waits, from its ledger;
 * - `gap`: time between two attempts of a client that does not say what it did then (naive, the
 *   peers): a backoff, or the client's own work — inferred, not measured;
 * - `error`: where prazo's client ended the call with an error (its code in `note`; no length) —
 *   at the call's start when it refused the call before sending anything;
 * - `transit`: from the user's send to the gateway's arrival (the drill adds it: it knows how long
 *   the user's deadline was when the request was sent).
 */
export type SpanKind =
  | 'hop'
  | 'pool'
  | 'call'
  | 'queue'
  | 'attempt'
  | 'backoff'
  | 'retry-after'
  | 'hedge-delay'
  | 'gap'
  | 'error'
  | 'transit';

const SPAN_KINDS: ReadonlySet<string> = new Set<SpanKind>([
  'hop',
  'pool',
  'call',
  'queue',
  'attempt',
  'backoff',
  'retry-after',
  'hedge-delay',
  'gap',
  'error',
  'transit',
]);

/** One span of a trail. */
export interface TrailSpan {
  /** The service it happened in (`gateway`, `orders`, `inventory`). */
  hop: string;
  kind: SpanKind;
  /** Start, epoch ms (fractional). */
  startMs: number;
  durationMs: number;
  /** What to say about it: the attempt's kind and outcome, the time left on arrival … ('' for nothing). */
  note: string;
}

/** Now, in epoch ms with sub-millisecond resolution, comparable between the drill's processes. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

const tenth = (value: number) => Math.round(value * 10) / 10;

/** One span as trail text (a JSON array: hop, kind, start, duration, note). */
export function encodeSpan(span: TrailSpan): string {
  return JSON.stringify([span.hop, span.kind, tenth(span.startMs), tenth(span.durationMs), span.note]);
}

/**
 * The trail a service answers with: its own spans, then the trail its dependency answered with
 * (`below`, as received; left out when it would make the value too long).
 */
export function joinTrail(own: readonly TrailSpan[], below: unknown): string {
  let text = '';
  for (const span of own) text += text === '' ? encodeSpan(span) : `,${encodeSpan(span)}`;
  if (typeof below === 'string' && below !== '' && text.length + below.length + 1 <= MAX_TRAIL_LENGTH)
    text = text === '' ? below : `${text},${below}`;
  return text.length <= MAX_TRAIL_LENGTH ? text : '';
}

/**
 * Reads a trail value: the valid spans, in order, at most {@link MAX_TRAIL_SPANS}. Anything else
 * (not a string, too long, not JSON, a span of the wrong shape) is left out; never throws.
 */
export function parseTrail(value: unknown): TrailSpan[] {
  if (typeof value !== 'string' || value === '' || value.length > MAX_TRAIL_LENGTH) return [];
  let items: unknown;
  try {
    items = JSON.parse(`[${value}]`);
  } catch {
    return [];
  }
  if (!Array.isArray(items)) return [];
  const spans: TrailSpan[] = [];
  for (const item of items) {
    if (spans.length === MAX_TRAIL_SPANS) break;
    const span = spanOf(item);
    if (span !== null) spans.push(span);
  }
  return spans;
}

function spanOf(item: unknown): TrailSpan | null {
  if (!Array.isArray(item) || item.length !== 5) return null;
  const [hop, kind, startMs, durationMs, note] = item as unknown[];
  if (typeof hop !== 'string' || hop.length > 64) return null;
  if (typeof kind !== 'string' || !SPAN_KINDS.has(kind)) return null;
  if (typeof startMs !== 'number' || !Number.isFinite(startMs)) return null;
  if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs < 0) return null;
  if (typeof note !== 'string' || note.length > 200) return null;
  return { hop, kind: kind as SpanKind, startMs, durationMs, note };
}

/**
 * The attempts one call of a client made, as the tier's attempt hook hears of them (naive, the
 * peers): each attempt's kind — the one its `x-prazo-attempt` header carried to the supplier —, when
 * it ended and how long it took, and whether it was answered below 500.
 */
export interface AttemptTrace {
  attempts: Array<{ kind: string; endMs: number; durationMs: number; ok: boolean }>;
}

/**
 * The spans of a call's attempts heard through {@link AttemptTrace} (naive, the peers): one per
 * attempt, and a `gap` wherever the next attempt started after the previous one ended.
 */
export function traceSpans(hop: string, trace: AttemptTrace): TrailSpan[] {
  const spans: TrailSpan[] = [];
  const sorted = [...trace.attempts].sort((a, b) => a.endMs - a.durationMs - (b.endMs - b.durationMs));
  let previousEnd = Number.NaN;
  sorted.forEach((attempt, i) => {
    const startMs = attempt.endMs - attempt.durationMs;
    if (startMs - previousEnd >= 0.5)
      spans.push({ hop, kind: 'gap', startMs: previousEnd, durationMs: startMs - previousEnd, note: '' });
    spans.push({
      hop,
      kind: 'attempt',
      startMs,
      durationMs: attempt.durationMs,
      note: `#${i + 1} ${attempt.kind} ${attempt.ok ? 'ok' : 'failed'}`,
    });
    previousEnd = Number.isNaN(previousEnd) ? attempt.endMs : Math.max(previousEnd, attempt.endMs);
  });
  return spans;
}
