import type { Deadline } from '../deadline/deadline.js';
import { InvalidOptionError } from '../errors.js';
import type { AttemptPhase } from '../policy/classify.js';
import { isIdempotent } from '../policy/idempotency.js';
import { ATTEMPT_HEADER, type AttemptKind } from '../wire/attempt-header.js';
import { DEADLINE_HEADER } from '../wire/deadline-header.js';
import type { Attempt } from './attempt.js';
import type { HedgedTry } from './hedge.js';
import type { RequestBody } from './transport.js';

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
  /** The call's deadline; beats the ambient one. Capped at now + `localMaxMs`. */
  deadline?: Deadline | { readonly limitMs: number };
  /** Cancels the call (the error is `CANCELLED`, distinct from `DEADLINE_EXCEEDED`). */
  signal?: AbortSignal;
  /** Overrides the method rule (GET/HEAD/OPTIONS/PUT/DELETE, or an `Idempotency-Key`). */
  idempotent?: boolean;
}

/** What happened to one attempt, in the history carried by responses and errors. */
export interface AttemptRecord {
  /** 1-based attempt number within the call. */
  attempt: number;
  /** The instance's origin. */
  instance: string;
  kind: AttemptKind;
  /** Where the attempt stopped (`response` when the server answered). */
  phase: AttemptPhase;
  /** From send to response headers or failure, in ms. */
  durationMs: number;
  outcome: 'success' | 'failure' | 'aborted';
  status?: number;
  /** `code` of the attempt's error. */
  errorCode?: string;
}

export type { DependencyResponse } from './response.js';

const OWN_HEADERS = new Set([DEADLINE_HEADER, ATTEMPT_HEADER]);

/**
 * The state of one call as it moves through the steps. One object per call, fixed shape; the
 * steps read and write its fields instead of passing option objects around.
 */
export class Call {
  readonly id: number;
  readonly method: string;
  readonly path: string;
  /** The caller's headers as a flat `[name, value, …]` list (prazo's own removed), or null. */
  readonly headerPairs: string[] | null;
  readonly body: RequestBody | undefined;
  readonly idempotent: boolean;
  /** The body can be sent again (absent, string or bytes). */
  readonly replayable: boolean;
  readonly explicitLimitMs: number | undefined;
  readonly signal: AbortSignal | undefined;

  /** Absolute limit of the call, epoch ms, and its header form. */
  limitMs = 0;
  limitHeader = '';
  startMs = 0;
  readonly attempts: AttemptRecord[] = [];
  /** Attempts sent, hedges included. */
  attemptCount = 0;
  /** Tries of the retry loop (a hedged try counts once). */
  tries = 0;
  /** Kind of the next attempt the attempt step sends. */
  nextKind: AttemptKind = 'original';
  /** Instance to avoid for the next attempt, or -1. */
  avoid = -1;
  /** Instance the next attempt must use (a hedge copy), or -1. */
  forcedInstance = -1;
  /** End of the current try (epoch ms) and whether it is the deadline that sets it. */
  tryDueAt = 0;
  tryByDeadline = false;
  tryTimeoutMs = 0;
  /** The attempt started last (read by the hedge step right after starting one). */
  lastStarted: Attempt | null = null;
  inflight1: Attempt | null = null;
  inflight2: Attempt | null = null;
  /** Set when the caller cancelled: the error every step rethrows. */
  cancelled: Error | null = null;
  /** Whether an attempt of the current try already won. */
  trySettled = false;
  /** The hedge referee of the current try, if it may be hedged. */
  hedge: HedgedTry | null = null;
  /** Wakes a retry delay early (cancellation). */
  wake: (() => void) | null = null;

  constructor(id: number, options: RequestOptions) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError('request', 'an object with a path', options);
    this.id = id;
    const method = options.method === undefined ? 'GET' : options.method;
    if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))
      throw new InvalidOptionError('method', 'an HTTP method name', method);
    this.method = method === 'GET' || method === 'POST' ? method : method.toUpperCase();
    const path = options.path;
    if (typeof path !== 'string' || path.charCodeAt(0) !== 47 /* / */)
      throw new InvalidOptionError('path', 'a string starting with "/"', path);
    this.path = options.query === undefined ? path : withQuery(path, options.query);
    const headers = options.headers;
    this.headerPairs = headers === undefined ? null : flattenHeaders(headers);
    const body = options.body ?? undefined;
    this.body = body;
    this.replayable = body === undefined || typeof body === 'string' || body instanceof Uint8Array;
    this.idempotent =
      options.idempotent !== undefined
        ? options.idempotent === true
        : this.method === 'GET' || this.method === 'HEAD' || isIdempotent(this.method, headers as never);
    this.explicitLimitMs = options.deadline === undefined ? undefined : options.deadline.limitMs;
    this.signal = options.signal;
  }

  /** Whether the call may be hedged: idempotent and replayable. */
  get hedgeable(): boolean {
    return this.idempotent && this.replayable;
  }

  track(attempt: Attempt): void {
    this.lastStarted = attempt;
    if (this.inflight1 === null) this.inflight1 = attempt;
    else this.inflight2 = attempt;
  }

  untrack(attempt: Attempt): void {
    if (this.inflight1 === attempt) this.inflight1 = null;
    else if (this.inflight2 === attempt) this.inflight2 = null;
  }

  /** Aborts every attempt in flight with `reason`. */
  abortInflight(reason: unknown): void {
    this.inflight1?.abort(reason);
    this.inflight2?.abort(reason);
  }
}

function flattenHeaders(headers: RequestHeaders): string[] {
  if (typeof headers !== 'object' || headers === null)
    throw new InvalidOptionError('headers', 'an object of header names to values', headers);
  const pairs: string[] = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (OWN_HEADERS.has(name.toLowerCase())) continue; // prazo sets these itself, per attempt
    if (Array.isArray(value)) for (const v of value) pairs.push(name, String(v));
    else pairs.push(name, String(value));
  }
  return pairs;
}

function withQuery(path: string, query: NonNullable<RequestOptions['query']>): string {
  if (typeof query !== 'object' || query === null)
    throw new InvalidOptionError('query', 'an object of parameter names to values', query);
  const params = new URLSearchParams();
  for (const name of Object.keys(query)) {
    const value = query[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, String(v));
    else params.append(name, String(value));
  }
  const text = params.toString();
  if (text === '') return path;
  return path + (path.includes('?') ? '&' : '?') + text;
}
