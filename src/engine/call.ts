import type { Clock } from '../clock.js';
import { withAmbientCriticality } from '../deadline/criticality-context.js';
import type { Deadline } from '../deadline/deadline.js';
import { InvalidOptionError } from '../errors.js';
import type { ClassifyContext } from '../policy/classify.js';
import {
  hasIdempotencyKey,
  hasIdempotencyKeyInPairs,
  isHedgeSafe,
  isIdempotent,
  SAFE_METHODS,
} from '../policy/idempotency.js';
import type { RequestBody } from '../transport/transport.js';
import { ATTEMPT_HEADER } from '../wire/attempt-header.js';
import { DEADLINE_HEADER } from '../wire/deadline-header.js';
import { mintIdempotencyKey } from '../wire/idempotency-key-header.js';
import { CallLedger } from './ledger.js';
import { RecordedBody } from './recorded-body.js';
import type { AttemptRecord } from './response.js';

/** Header values a caller may pass. */
export type RequestHeaders = Record<string, string | readonly string[] | number | undefined>;

/** One call of `dependency.request()`. */
export interface RequestOptions {
  /** @default 'GET' */
  method?: string;
  /** Path on the instance, starting with `/` (may carry a query string). */
  path: string;
  /** Query parameters appended to `path`. */
  query?: Record<string, string | number | boolean | readonly (string | number | boolean)[] | undefined>;
  headers?: RequestHeaders;
  /** A string or bytes (replayable), or a stream (sent once, never retried or hedged). */
  body?: RequestBody | null;
  /**
   * The call's deadline: the earlier of it and the ambient one wins (it can shorten the time a call
   * gets, never lengthen it). Capped at now + `localMaxMs`. A `Deadline`, an object with an absolute
   * `limitMs` (epoch ms), or a number: **milliseconds from now**, as in `Deadline.after(ms)`
   * (`deadline: 200` gives the call at most 200 ms). A number above 2147483647 (an epoch instant
   * passed by mistake) is refused.
   * @throws {InvalidOptionError} (`deadline`) for anything else: a string, NaN, a `Date` …
   */
  deadline?: Deadline | { readonly limitMs: number } | number;
  /** Cancels the call (the error is `CANCELLED`, distinct from `DEADLINE_EXCEEDED`). */
  signal?: AbortSignal | null;
  /**
   * Overrides the method rule for retries (GET/HEAD/OPTIONS/PUT/DELETE, or an `Idempotency-Key`).
   * `false` also forbids hedging; `true` does not allow it: only GET/HEAD/OPTIONS or a request
   * carrying an `Idempotency-Key` is hedged (two copies in flight at once).
   */
  idempotent?: boolean;
  /**
   * `'auto'`: unless the request is GET, HEAD or OPTIONS or already carries an `Idempotency-Key`
   * (a caller's own key wins), mint one key for this call and send it on every attempt and hedge
   * of it — the call then counts as idempotent (retried and hedged under the retry budget). `false`:
   * never mint. Overrides the dependency's `idempotencyKey`; ignored with `idempotent: false`.
   * @default the dependency's `idempotencyKey` (false)
   */
  idempotencyKey?: 'auto' | false;
  /**
   * `false`: no hedge copy for this call, whatever the dependency's `hedge` (a call too costly to
   * have twice in flight, or a comparison of the same traffic with and without). Its retries are
   * unchanged. `true` (the default) leaves hedging to the dependency's `hedge` option.
   * @default true
   */
  hedge?: boolean;
}

/** Largest `deadline` in ms from now a call accepts (Node's longest timer, ≈ 24.8 days). */
export const MAX_DEADLINE_FROM_NOW_MS = 2_147_483_647;

export type { DependencyResponse } from './response.js';

/**
 * What a call may be waiting on — a try's attempts, a retry delay, a place in the concurrency
 * queue, the first set of origins — which the caller's cancellation or the dependency's `close()`
 * interrupts. The step that waits registers it on the call for as long as it waits.
 */
export interface Interruptible {
  /** Ends the wait now: attempts are aborted with `reason`, a delay or queue ends early. */
  interrupt(reason: Error): void;
}

const OWN_HEADERS = new Set([DEADLINE_HEADER, ATTEMPT_HEADER]);

/** The header name a minted key goes out under (the draft's spelling). */
const IDEMPOTENCY_KEY_NAME = 'Idempotency-Key';

/**
 * An abort handle made for one call alone: an entry point's per-request object (the undici
 * interceptor's controller), given with `Engine.requestPrepared` in place of a caller's `signal`.
 * The call adds one listener to it and never removes it: the handle keeps that one listener and
 * drops it itself once the call has answered or failed. A caller's `signal`, which many calls may
 * share, is followed through one shared listener instead, and left when the call settles — which
 * takes a `WeakMap` entry, a `Set`, an outcome of its own and two closures per call.
 */
export interface CallHandle {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void): void;
}

/**
 * One call as it moves through the steps: the request (read-only), its deadline (written once, by
 * the deadline step, before any other step reads it), its history (the attempts and the instances
 * that failed, appended to by the attempt step alone) and its cancellation (the error, and what it
 * must interrupt: written by `cancel()` alone). One object per call, fixed shape. The state of one
 * try is not here: the retry step hands it down in the try's first `Attempt` (`steps/attempt.ts`),
 * and keeps its own counts (tries, requeues) as locals.
 */
/**
 * What a dependency does with `Idempotency-Key`s, as its calls need it (one object per engine):
 * `mint` (`idempotencyKey: 'auto'`) and `perInstance` (`idempotencyScope: 'instance'`).
 */
export interface CallKeys {
  readonly mint: boolean;
  readonly perInstance: boolean;
}

/** Calls made outside an engine: no key minted, none kept per instance. */
const NO_KEYS: CallKeys = Object.freeze({ mint: false, perInstance: false });

export class Call {
  readonly id: number;
  readonly method: string;
  readonly path: string;
  /** The caller's headers as a flat `[name, value, …]` list (prazo's own removed), or null. */
  readonly headerPairs: string[] | null;
  /** The body as the caller gave it, or, for a stream an idempotent call may resend, its {@link RecordedBody}. */
  readonly #body: RequestBody | RecordedBody | undefined;
  readonly idempotent: boolean;
  /**
   * Two copies may be in flight at once: idempotent, and a safe method or an `Idempotency-Key`
   * (a key the instances remember each for itself only while the call is not {@link Call.pinned}).
   */
  readonly hedgeSafe: boolean;
  /** The caller turned hedging off for this call (`hedge: false`); its retries are unchanged. */
  readonly hedgeOff: boolean;
  /**
   * A keyed write whose key only the instance that ran it remembers (`idempotencyScope:
   * 'instance'`): never two copies in flight, and a retry after an attempt that may have been
   * written goes back to that attempt's instance ({@link Call.pinnedOrigin}).
   */
  readonly pinned: boolean;
  /** The body was given whole (absent, string or bytes): it can be sent again. See {@link Call.replayable}. */
  readonly #given: boolean;
  readonly explicitLimitMs: number | undefined;
  /** The caller's signal (given in `options.signal`), or undefined. */
  readonly signal: AbortSignal | undefined;
  /** The call's own abort handle, from an entry point that made one ({@link CallHandle}), or undefined. */
  readonly handle: CallHandle | undefined;

  /** Where the call's time went (see {@link CallLedger}): on its response and its error. */
  readonly ledger: CallLedger;
  // What changes during the call, each written by one method below (each called by one owner).
  // The start and the limit live on the ledger alone (`begin`): epoch ms are doubles, and each
  // field holding one is a number object of its own.
  #limitHeader = '';
  /** The history, made at its first record or read (see {@link Call.recordAttempt}). */
  #attempts: AttemptRecord[] | null = null;
  #attemptCount = 0;
  #failedOn: number[] | null = null;
  #pinnedOrigin: string | null = null;
  #cancelled: Error | null = null;
  #waitingOn: Interruptible | null = null;

  /**
   * Reads and checks the caller's options: every unusable one throws `INVALID_OPTION` naming it,
   * none is ignored. `clock` turns a `deadline` in ms from now into an instant. An entry point that
   * read the request itself (`Engine.requestPrepared`) gives `readPairs`, the caller's headers
   * already as flat pairs (prazo's own removed, string values; null: none), in place of
   * `options.headers`, and `handle`, in place of `options.signal`.
   */
  constructor(
    id: number,
    options: RequestOptions,
    clock: Clock,
    keys: CallKeys = NO_KEYS,
    readPairs?: string[] | null,
    handle?: CallHandle,
  ) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError('request', 'an object with a path', options);
    checkKnownOptions(options);
    this.id = id;
    this.ledger = new CallLedger(clock);
    const method = options.method === undefined ? 'GET' : options.method;
    if (method === 'GET' || method === 'POST') {
      // The usual methods skip the pattern (a regular expression run costs more than the rest here).
      this.method = method;
    } else {
      if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))
        throw new InvalidOptionError('method', 'an HTTP method name', method);
      this.method = method.toUpperCase();
    }
    const path = options.path;
    if (typeof path !== 'string' || path.charCodeAt(0) !== 47 /* / */)
      throw new InvalidOptionError('path', 'a string starting with "/"', path);
    this.path = options.query === undefined ? path : withQuery(path, options.query);
    const headers = options.headers;
    const pairs = readPairs;
    // The ambient criticality (x-criticality) travels like the deadline.
    let headerPairs = withAmbientCriticality(
      pairs !== undefined ? pairs : headers === undefined ? null : flattenHeaders(headers),
    );
    const body = options.body ?? undefined;
    if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array) && !isStream(body))
      throw new InvalidOptionError(
        'body',
        'a string, bytes or a stream (serialise objects first, e.g. JSON.stringify)',
        body,
      );
    this.#given = body === undefined || typeof body === 'string' || body instanceof Uint8Array;
    if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean')
      throw new InvalidOptionError('idempotent', 'true or false', options.idempotent);
    const mint = options.idempotencyKey;
    if (mint !== undefined && mint !== 'auto' && mint !== false)
      throw new InvalidOptionError('idempotencyKey', "'auto' or false", mint);
    let keyed = this.method !== 'GET' && carriesIdempotencyKey(headers, pairs);
    if (
      !keyed &&
      (mint === undefined ? keys.mint : mint === 'auto') &&
      options.idempotent !== false &&
      this.method !== 'GET' &&
      !SAFE_METHODS.has(this.method)
    ) {
      // One key for the whole call: every attempt and hedge sends these same pairs. The verdicts
      // below read the headers as sent, so a minted key counts exactly as a caller's own.
      headerPairs ??= [];
      headerPairs.push(IDEMPOTENCY_KEY_NAME, mintIdempotencyKey());
      keyed = hasIdempotencyKeyInPairs(headerPairs);
    }
    this.headerPairs = headerPairs;
    this.idempotent =
      options.idempotent !== undefined
        ? options.idempotent === true
        : this.method === 'GET' || this.method === 'HEAD' || isIdempotent(this.method) || keyed;
    const safeMethod = this.method === 'GET' || this.method === 'HEAD' || isHedgeSafe(this.method);
    // A key makes the write safe to repeat only where the store that holds it sees every copy.
    this.pinned = keyed && keys.perInstance && !safeMethod && options.idempotent === undefined;
    this.hedgeSafe = this.idempotent && (safeMethod || (keyed && !this.pinned));
    const hedge = options.hedge;
    if (hedge !== undefined && typeof hedge !== 'boolean')
      throw new InvalidOptionError('hedge', 'true or false', hedge);
    this.hedgeOff = hedge === false;
    // A stream an idempotent call may resend is recorded as its first attempt sends it.
    this.#body =
      this.#given || !this.idempotent ? body : new RecordedBody(body as AsyncIterable<Uint8Array | string>);
    const deadline = options.deadline;
    this.explicitLimitMs = deadline === undefined ? undefined : limitOf(deadline, clock);
    const signal = options.signal ?? undefined;
    if (signal !== undefined && (typeof signal !== 'object' || typeof signal.aborted !== 'boolean'))
      throw new InvalidOptionError('signal', 'an AbortSignal', signal);
    this.signal = signal;
    this.handle = handle;
  }

  /**
   * Fixes the call's start (`startMs`, epoch ms), its absolute limit (`limitMs`) and the limit's
   * header value: the deadline step's, once, before any other step runs.
   */
  begin(startMs: number, limitMs: number, limitHeader: string): void {
    const ledger = this.ledger;
    ledger.startMs = startMs;
    ledger.limitMs = limitMs;
    this.#limitHeader = limitHeader;
  }

  /** When the call entered the steps, epoch ms (0 before). */
  get startMs(): number {
    return this.ledger.startMs;
  }

  /** Absolute limit of the call, epoch ms (0 before the deadline step). */
  get limitMs(): number {
    return this.ledger.limitMs;
  }

  /** {@link Call.limitMs} as the deadline header sends it. */
  get limitHeader(): string {
    return this.#limitHeader;
  }

  /** Attempts sent, hedges included. */
  get attemptCount(): number {
    return this.#attemptCount;
  }

  /** Numbers the next attempt (the attempt step's, as it sends one): 1 for the first. */
  nextAttempt(): number {
    return ++this.#attemptCount;
  }

  /**
   * Instances whose attempts failed in this call, oldest first (null until one fails): a retry or a
   * requeue prefers an instance that is up and not among them (`Balancer.pickRetry`).
   */
  get failedOn(): readonly number[] | null {
    return this.#failedOn;
  }

  /** Set when the caller cancelled (or the dependency closed): the error every step rethrows. */
  get cancelled(): Error | null {
    return this.#cancelled;
  }

  /** What the call waits on now (a try, a delay, a queue), for a cancellation to interrupt; or null. */
  get waitingOn(): Interruptible | null {
    return this.#waitingOn;
  }

  /** The call waits on `wait` (a try, a delay, a place in a queue) until {@link Call.stopWaiting}. */
  waitOn(wait: Interruptible): void {
    this.#waitingOn = wait;
  }

  /** The wait on `wait` is over (a no-op when the call already waits on something else). */
  stopWaiting(wait: Interruptible): void {
    if (this.#waitingOn === wait) this.#waitingOn = null;
  }

  /** Every attempt of the call so far, in order: the history its response or error carries. */
  get attempts(): AttemptRecord[] {
    if (this.#attempts === null) this.#attempts = [];
    return this.#attempts;
  }

  /**
   * Adds `record` to the history. Most calls make one attempt: a one-element array costs 56 bytes,
   * where an empty one makes room for 16 records at its first `push` (176 bytes in all).
   */
  recordAttempt(record: AttemptRecord): void {
    const list = this.#attempts;
    if (list === null) this.#attempts = [record];
    else list.push(record);
  }

  /** What an attempt sends: the caller's body, or a recorded stream's bytes once it was sent whole. */
  get body(): RequestBody | undefined {
    const body = this.#body;
    if (body instanceof RecordedBody) return body.bytes ?? body;
    return body;
  }

  /**
   * The body can be sent again: absent, a string or bytes, or a stream an idempotent call recorded
   * whole as its first attempt sent it ({@link RecordedBody}, up to 64 KiB). Until then a stream is
   * sent once: no hedge, no retry.
   */
  get replayable(): boolean {
    if (this.#given) return true;
    const body = this.#body;
    return body instanceof RecordedBody && body.bytes !== null;
  }

  /**
   * Whether the call may be hedged: safe to have twice in flight, and its body replayable — or a
   * stream being recorded, which a copy may follow once it has been sent whole (the copy checks
   * {@link Call.replayable} when it is due).
   */
  get hedgeable(): boolean {
    return this.hedgeSafe && (this.#given || this.#body instanceof RecordedBody);
  }

  /** What the classification of the call's failures needs to know about its request, at `nowMs`. */
  classifyContext(nowMs: number): ClassifyContext {
    return { idempotent: this.idempotent, replayable: this.replayable, nowMs };
  }

  /**
   * The origin a retry of this {@link Call.pinned} call must go back to (an attempt there may have
   * been written and its answer is unknown), or null: any instance.
   */
  get pinnedOrigin(): string | null {
    return this.#pinnedOrigin;
  }

  /**
   * An attempt of a pinned call ended: `origin` when its request may have been written and nobody
   * knows what came of it (its retries go back there), null when it answered or was never written
   * (its retries may go anywhere).
   */
  pinTo(origin: string | null): void {
    this.#pinnedOrigin = origin;
  }

  /** Notes that an attempt on `instance` failed (once per instance). */
  noteFailure(instance: number): void {
    const list = this.#failedOn;
    if (list === null) this.#failedOn = [instance];
    else if (!list.includes(instance)) list.push(instance);
  }

  /**
   * The caller cancelled the call with `error`, or the dependency closed under it: every step
   * rethrows it from now on, and what the call waits on is interrupted. The first cancellation
   * stands: a later one (the caller's signal after `close()`) changes nothing.
   */
  cancel(error: Error): void {
    if (this.#cancelled !== null) return;
    this.#cancelled = error;
    this.#waitingOn?.interrupt(error);
  }
}

/** Option names of {@link RequestOptions}; anything else is refused rather than ignored. */
function checkKnownOptions(options: RequestOptions): void {
  // A for-in over the caller's two or three keys costs ≈ 10 ns; a typo such as `timeout: 500` would
  // otherwise run silently with the defaults.
  for (const name in options) {
    switch (name) {
      case 'method':
      case 'path':
      case 'query':
      case 'headers':
      case 'body':
      case 'deadline':
      case 'signal':
      case 'idempotent':
      case 'idempotencyKey':
      case 'hedge':
        break;
      default:
        if ((options as unknown as Record<string, unknown>)[name] !== undefined)
          throw new InvalidOptionError(
            name,
            'absent: request() takes method, path, query, headers, body, deadline, signal, idempotent, idempotencyKey, hedge',
            (options as unknown as Record<string, unknown>)[name],
          );
    }
  }
}

/** The absolute limit (epoch ms) of a `deadline` option. */
function limitOf(deadline: NonNullable<RequestOptions['deadline']>, clock: Clock): number {
  if (typeof deadline === 'number') {
    if (Number.isFinite(deadline) && deadline <= MAX_DEADLINE_FROM_NOW_MS) return clock.now() + deadline;
  } else if (typeof deadline === 'object' && deadline !== null) {
    const limitMs = deadline.limitMs;
    if (typeof limitMs === 'number' && Number.isFinite(limitMs)) return limitMs;
    throw new InvalidOptionError('deadline.limitMs', 'a finite number (epoch ms)', limitMs);
  }
  throw new InvalidOptionError(
    'deadline',
    `a Deadline, { limitMs } (epoch ms) or a number of ms from now (≤ ${MAX_DEADLINE_FROM_NOW_MS})`,
    deadline,
  );
}

function isStream(body: object): boolean {
  return typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** Whether the request's headers — the caller's record, or the pairs an entry point read — carry an `Idempotency-Key`. */
function carriesIdempotencyKey(
  headers: RequestHeaders | undefined,
  pairs: string[] | null | undefined,
): boolean {
  return pairs === undefined ? hasIdempotencyKey(headers as never) : hasIdempotencyKeyInPairs(pairs);
}

/** The caller's headers as flat pairs; null when there are none (an attempt then sends only prazo's). */
function flattenHeaders(headers: RequestHeaders): string[] | null {
  if (typeof headers !== 'object' || headers === null)
    throw new InvalidOptionError('headers', 'an object of header names to values', headers);
  let pairs: string[] | null = null;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (OWN_HEADERS.has(name.toLowerCase())) continue; // prazo sets these itself, per attempt
    pairs ??= [];
    if (Array.isArray(value)) for (const v of value) pairs.push(name, scalar(`headers.${name}`, v, false));
    else pairs.push(name, scalar(`headers.${name}`, value, false));
  }
  return pairs;
}

/** A header or query value as text; an object (`[object Object]` on the wire) is refused. */
function scalar(option: string, value: unknown, booleans: boolean): string {
  const type = typeof value;
  if (type === 'string') return value as string;
  if (type === 'number' || (booleans && type === 'boolean')) return String(value);
  throw new InvalidOptionError(
    option,
    booleans ? 'a string, number or boolean' : 'a string or number',
    value,
  );
}

function withQuery(path: string, query: NonNullable<RequestOptions['query']>): string {
  if (typeof query !== 'object' || query === null)
    throw new InvalidOptionError('query', 'an object of parameter names to values', query);
  const params = new URLSearchParams();
  for (const name of Object.keys(query)) {
    const value = query[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, scalar(`query.${name}`, v, true));
    else params.append(name, scalar(`query.${name}`, value, true));
  }
  const text = params.toString();
  if (text === '') return path;
  return path + (path.includes('?') ? '&' : '?') + text;
}
