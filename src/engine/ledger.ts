import { formatMs } from '@prazo/cli-kit/format';
import type { Clock } from '../clock.js';
import type { HopTally } from '../deadline/hop-tally.js';
import type { AttemptKind } from '../wire/attempt-header.js';
import {
  type HopReading,
  type HopTiming,
  readHopTiming,
  SERVER_TIMING_HEADER,
  type ServerTimingProblem,
} from '../wire/server-timing.js';

/** How one attempt spent its time, as the attempt step records it (the attempt itself implements it). */
export interface AttemptTiming {
  readonly number: number;
  readonly kind: AttemptKind;
  readonly origin: string;
  /** Epoch ms it was sent at. */
  readonly startMs: number;
  /** Epoch ms the transport wrote it (a connection was ready), or -1 (not written, or not known). */
  writtenMs: number;
  /** Epoch ms it ended: response headers, or its failure; -1 while in flight. */
  endMs: number;
  /** Epoch ms its response body ended (read, dumped or failed), or -1. */
  bodyEndMs: number;
  /** The status it was answered with, or 0. */
  status: number;
  outcome: 'success' | 'failure' | 'aborted' | null;
  /** The `Server-Timing` value it was answered with (parsed only when the ledger is read). */
  serverTiming: unknown;
  /** {@link AttemptTiming.serverTiming} once parsed (null until then). */
  reading: HopReading | null;
  /** The first copy of its try (itself, unless it is a hedge copy). */
  readonly tryFirst: AttemptTiming | null;
}

/** A wait of the call between attempts, or before the first one. */
export interface LedgerWait {
  /**
   * `queue`: for a slot of the dependency's concurrency limit; `backoff`: the retry's delay;
   * `retry-after`: the delay the server asked for; `hedge-delay`: from a try's first copy to its
   * hedge copy (the two overlap: the copy's wait is not the call's).
   */
  readonly kind: 'queue' | 'backoff' | 'retry-after' | 'hedge-delay';
  /** Start, in ms since the call started. */
  readonly atMs: number;
  readonly durationMs: number;
  /** Time left of the deadline when it started, in ms. */
  readonly leftMs: number;
}

/** One attempt of the call, with its phases and what the server said of its own share. */
export interface LedgerAttempt {
  readonly kind: 'attempt';
  /** 1-based number of the attempt within the call. */
  readonly attempt: number;
  readonly attemptKind: AttemptKind;
  /** The instance's origin. */
  readonly instance: string;
  /** Sent at, in ms since the call started. */
  readonly atMs: number;
  /** From send to response headers or failure, in ms (still running: up to the ledger's end). */
  readonly durationMs: number;
  /** Time left of the deadline when it was sent, in ms. */
  readonly leftMs: number;
  readonly outcome: 'success' | 'failure' | 'aborted' | null;
  readonly status: number | undefined;
  /** From send until a connection took the request (connecting, or waiting for a free one), ms. */
  readonly connectMs: number | undefined;
  /** From the request written to the response headers, ms. */
  readonly firstByteMs: number | undefined;
  /** From the response headers to the end of the body, ms (once the body has ended). */
  readonly bodyMs: number | undefined;
  /**
   * What a prazo server said of the time it spent (its `Server-Timing`), down its own chain of
   * dependencies; null when the answer carried none (a server not on prazo: one opaque interval).
   */
  readonly remote: HopTiming | null;
  /** Why the answer's `Server-Timing` was (partly) ignored, or null. */
  readonly ignored: ServerTimingProblem | null;
}

export type LedgerEntry = LedgerWait | LedgerAttempt;

/** Told that `attempt`'s `Server-Timing` was (partly) ignored, and why. */
export type IgnoredServerTiming = (reason: ServerTimingProblem, attempt: AttemptTiming) => void;

/** A share of a call's time, at one hop of the chain. */
export interface LedgerShare {
  /**
   * `here`: this process, outside any attempt (queue, backoff, its own work); `transit`: between
   * a caller's measure of an attempt and the callee's (network, the server's parsing and
   * middleware before prazo's adapter); `queued`: the callee's admission queue; `own`: the
   * callee's handler minus the time it waited on its dependencies; `opaque`: a dependency that
   * did not say (not a prazo server).
   */
  readonly kind: 'here' | 'transit' | 'queued' | 'own' | 'opaque';
  /** The hop: '' for this process, else dependency names from here joined with `>` ('inventory>supplier'). */
  readonly hop: string;
  readonly ms: number;
}

/** The deadline ledger of a call: where the time between its start and its end went. */
export interface DeadlineLedger {
  /** The dependency called. */
  readonly dependency: string;
  /** Time the call had when it started (its limit minus its start), ms. */
  readonly budgetMs: number;
  /** From the call's start to its end (its last attempt's answer, or its error), ms. */
  readonly elapsedMs: number;
  /** Time waiting for a slot of the concurrency limit, ms. */
  readonly queuedMs: number;
  /** Time with no attempt in flight (queue, backoff, Retry-After, this process), ms. */
  readonly hereMs: number;
  /**
   * The steps in order (waits and attempts), each with the time left when it started. Built anew
   * at each read (a body read since then adds its phase).
   */
  readonly entries: readonly LedgerEntry[];
  /**
   * The call's time as shares, hop by hop down the chain (see {@link LedgerShare}): this process's,
   * then for each attempt the time in transit to the dependency, its queue, its own handler time
   * and, below it, the same for each of its dependencies. Overlapping hedge copies are each counted.
   */
  shares(): LedgerShare[];
  /** The ledger in one line: "1 900 ms: 12 ms here, 1 850 ms in inventory, of which 1 700 ms waiting on supplier". */
  summary(): string;
}

/**
 * The ledger of one call, kept by the call's steps. Cheap when nobody reads it: fixed fields the
 * steps write (the first attempt, the queue wait) and arrays made only for a second attempt or a
 * wait; the entries, the parse of `Server-Timing` and the summary are computed when read.
 */
export class CallLedger implements DeadlineLedger {
  /** The dependency's clock (the attempt reads it when its request is written, and its body ends). */
  readonly clock: Clock;
  dependency = '';
  startMs = 0;
  limitMs = 0;
  /** Set when the call ended with an error; otherwise the end is its last attempt's. */
  errorEndMs = -1;
  queuedMs = 0;
  #queuedAtMs = 0;
  #first: AttemptTiming | null = null;
  #more: AttemptTiming[] | null = null;
  #waits: LedgerWait[] | null = null;
  /** Told once per attempt whose `Server-Timing` was (partly) ignored, when it is parsed. */
  onIgnored: IgnoredServerTiming | null = null;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** The attempt step sent `attempt`. */
  sent(attempt: AttemptTiming): void {
    if (this.#first === null) this.#first = attempt;
    else if (this.#more === null) this.#more = [attempt];
    else this.#more.push(attempt);
  }

  /** The call waited for a slot from `fromMs` to `toMs`. */
  queued(fromMs: number, toMs: number): void {
    this.#queuedAtMs = fromMs;
    this.queuedMs += toMs - fromMs;
  }

  /** The call waited between tries from `fromMs` to `toMs`. */
  waited(kind: 'backoff' | 'retry-after', fromMs: number, toMs: number): void {
    const wait: LedgerWait = {
      kind,
      atMs: fromMs - this.startMs,
      durationMs: toMs - fromMs,
      leftMs: this.limitMs - fromMs,
    };
    if (this.#waits === null) this.#waits = [wait];
    else this.#waits.push(wait);
  }

  /** The call ended with an error at `nowMs` (the first end counts). */
  failed(nowMs: number): void {
    if (this.errorEndMs === -1) this.errorEndMs = nowMs;
  }

  /** The attempt sent last, or null. */
  lastSent(): AttemptTiming | null {
    const more = this.#more;
    return more === null ? this.#first : more[more.length - 1]!;
  }

  /** The attempts, in the order they were sent. */
  attemptTimings(): AttemptTiming[] {
    const first = this.#first;
    if (first === null) return [];
    return this.#more === null ? [first] : [first, ...this.#more];
  }

  /** What `attempt`'s `Server-Timing` says (parsed once, and counted when something was ignored). */
  readingOf(attempt: AttemptTiming): HopReading | null {
    if (attempt.serverTiming === undefined) return null;
    let reading = attempt.reading;
    if (reading === null) {
      reading = readHopTiming(attempt.serverTiming);
      attempt.reading = reading;
      if (reading.problem !== null) this.onIgnored?.(reading.problem, attempt);
    }
    return reading;
  }

  /** The last attempt that was answered (its `Server-Timing` is the dependency's word), or null. */
  lastAnswered(): AttemptTiming | null {
    const list = this.attemptTimings();
    for (let i = list.length - 1; i >= 0; i--) if (list[i]!.status !== 0) return list[i]!;
    return null;
  }

  get endMs(): number {
    if (this.errorEndMs !== -1) return this.errorEndMs;
    let end = this.startMs;
    for (const a of this.attemptTimings()) if (a.endMs > end) end = a.endMs;
    if (this.#waits !== null)
      for (const w of this.#waits) end = Math.max(end, this.startMs + w.atMs + w.durationMs);
    return end;
  }

  get budgetMs(): number {
    return this.limitMs - this.startMs;
  }

  get elapsedMs(): number {
    return this.endMs - this.startMs;
  }

  get hereMs(): number {
    return this.elapsedMs - this.#inAttemptsMs(this.endMs);
  }

  get entries(): LedgerEntry[] {
    const end = this.endMs;
    const entries: LedgerEntry[] = [];
    if (this.queuedMs > 0)
      entries.push({
        kind: 'queue',
        atMs: this.#queuedAtMs - this.startMs,
        durationMs: this.queuedMs,
        leftMs: this.limitMs - this.#queuedAtMs,
      });
    for (const a of this.attemptTimings()) {
      const first = a.tryFirst;
      if (a.kind === 'hedge' && first !== null && first !== a)
        entries.push({
          kind: 'hedge-delay',
          atMs: first.startMs - this.startMs,
          durationMs: a.startMs - first.startMs,
          leftMs: this.limitMs - first.startMs,
        });
      entries.push(attemptEntry(a, this.readingOf(a), this.startMs, this.limitMs, end));
    }
    if (this.#waits !== null) entries.push(...this.#waits);
    return entries.sort(byStart);
  }

  summary(): string {
    return describeLedger(this);
  }

  shares(): LedgerShare[] {
    return sharesOf(this);
  }

  /** The ledger's numbers as plain data (`JSON.stringify`, logs). */
  toJSON(): object {
    return {
      dependency: this.dependency,
      budgetMs: this.budgetMs,
      elapsedMs: this.elapsedMs,
      queuedMs: this.queuedMs,
      hereMs: this.hereMs,
      entries: this.entries,
    };
  }

  /** Wall time with at least one attempt in flight, up to `endMs`. */
  #inAttemptsMs(endMs: number): number {
    let total = 0;
    let coveredTo = Number.NEGATIVE_INFINITY;
    // Attempts are in the order they were sent: a union of intervals sorted by start.
    for (const a of this.attemptTimings()) {
      const to = a.endMs === -1 ? endMs : a.endMs;
      const from = Math.max(a.startMs, coveredTo);
      if (to > from) total += to - from;
      if (to > coveredTo) coveredTo = to;
    }
    return total;
  }
}

function byStart(a: LedgerEntry, b: LedgerEntry): number {
  return a.atMs - b.atMs;
}

function attemptEntry(
  a: AttemptTiming,
  reading: HopReading | null,
  startMs: number,
  limitMs: number,
  endMs: number,
): LedgerAttempt {
  const end = a.endMs === -1 ? endMs : a.endMs;
  const written = a.writtenMs;
  return {
    kind: 'attempt',
    attempt: a.number,
    attemptKind: a.kind,
    instance: a.origin,
    atMs: a.startMs - startMs,
    durationMs: end - a.startMs,
    leftMs: limitMs - a.startMs,
    outcome: a.outcome,
    status: a.status === 0 ? undefined : a.status,
    connectMs: written === -1 ? undefined : written - a.startMs,
    firstByteMs: written === -1 || a.status === 0 ? undefined : end - written,
    bodyMs: a.bodyEndMs === -1 || a.endMs === -1 ? undefined : a.bodyEndMs - a.endMs,
    remote: reading === null ? null : reading.hop,
    ignored: reading === null ? null : reading.problem,
  };
}

/** See {@link DeadlineLedger.shares}. */
export function sharesOf(ledger: DeadlineLedger): LedgerShare[] {
  const shares: LedgerShare[] = [{ kind: 'here', hop: '', ms: ledger.hereMs }];
  for (const entry of ledger.entries) {
    if (entry.kind !== 'attempt') continue;
    if (entry.remote === null) shares.push({ kind: 'opaque', hop: ledger.dependency, ms: entry.durationMs });
    else hopShares(shares, entry.remote, ledger.dependency, entry.durationMs, 0);
  }
  return shares;
}

function hopShares(shares: LedgerShare[], hop: HopTiming, path: string, waitMs: number, depth: number): void {
  const queued = hop.queuedMs ?? 0;
  const handler = hop.handlerMs ?? 0;
  shares.push({ kind: 'transit', hop: path, ms: Math.max(0, waitMs - queued - handler) });
  if (queued > 0) shares.push({ kind: 'queued', hop: path, ms: queued });
  let waited = 0;
  for (const wait of hop.dependencies) waited += wait.waitedMs;
  shares.push({ kind: 'own', hop: path, ms: Math.max(0, handler - waited) });
  if (depth >= 8) return;
  for (const wait of hop.dependencies) {
    const below = `${path}>${wait.name}`;
    if (wait.hop === null) shares.push({ kind: 'opaque', hop: below, ms: wait.waitedMs });
    else hopShares(shares, wait.hop, below, wait.waitedMs, depth + 1);
  }
}

/**
 * Where a hop's time went, following its largest wait down the chain: ", of which 1 700 ms waiting
 * on supplier, of which 900 ms waiting on db" (empty when the hop waited on nothing).
 */
export function describeWaits(hop: HopTiming | null, depth = 0): string {
  if (hop === null || depth >= 4) return '';
  let top = null;
  for (const wait of hop.dependencies) if (top === null || wait.waitedMs > top.waitedMs) top = wait;
  if (top === null || top.waitedMs <= 0) return '';
  return `, of which ${formatMs(top.waitedMs)} waiting on ${top.name}${describeWaits(top.hop, depth + 1)}`;
}

/** The one-line account of a ledger (see {@link DeadlineLedger.summary}). */
export function describeLedger(ledger: DeadlineLedger): string {
  const entries = ledger.entries;
  let attempts = 0;
  let pauses = 0;
  let last: LedgerAttempt | null = null;
  let told: LedgerAttempt | null = null;
  for (const entry of entries) {
    if (entry.kind === 'attempt') {
      attempts++;
      last = entry;
      if (entry.remote !== null) told = entry;
    } else if (entry.kind === 'backoff' || entry.kind === 'retry-after') pauses += entry.durationMs;
  }
  const inDependency = ledger.elapsedMs - ledger.hereMs;
  let line = `${formatMs(ledger.elapsedMs)}: ${formatMs(ledger.hereMs)} here`;
  const parts: string[] = [];
  if (ledger.queuedMs > 0) parts.push(`${formatMs(ledger.queuedMs)} queued`);
  if (pauses > 0) parts.push(`${formatMs(pauses)} between attempts`);
  if (parts.length > 0) line += ` (${parts.join(', ')})`;
  if (attempts === 0) return `${line}, no attempt sent to ${ledger.dependency}`;
  line += `, ${formatMs(inDependency)} in ${ledger.dependency}`;
  if (attempts > 1) line += ` over ${attempts} attempts`;
  if (told !== null) line += describeWaits(told.remote);
  else if (last !== null && last.status === undefined) line += ' (no answer)';
  return line;
}

/**
 * Where a served request's time went up to `nowMs`, from its hop tally: "Of the 1 900 ms left on
 * arrival, 1 800 ms are gone: 12 ms queued, 1 700 ms waiting on inventory, 88 ms in this handler".
 */
export function describeHop(tally: HopTally, nowMs: number): string {
  const timing = tally.timing(nowMs);
  const queued = timing.queuedMs ?? 0;
  const gone = nowMs - tally.arrivalMs;
  const waited = tally.waitedMs(nowMs);
  const parts: string[] = [];
  if (queued > 0) parts.push(`${formatMs(queued)} queued`);
  const deps = timing.dependencies.filter((w) => w.waitedMs > 0).sort((a, b) => b.waitedMs - a.waitedMs);
  for (const wait of deps.slice(0, 3))
    parts.push(`${formatMs(wait.waitedMs)} waiting on ${wait.name}${describeWaits(wait.hop)}`);
  if (deps.length > 1) parts.push(`${formatMs(waited)} waiting on dependencies in all`);
  parts.push(`${formatMs(Math.max(0, gone - queued - waited))} in this handler`);
  return `Of the ${formatMs(tally.leftMs)} left when the request arrived, ${formatMs(gone)} are gone: ${parts.join(', ')}`;
}

/** The `Server-Timing` of a response's headers (undici's: lower-case names). */
export function serverTimingOf(headers: Record<string, unknown>): unknown {
  return headers[SERVER_TIMING_HEADER];
}
