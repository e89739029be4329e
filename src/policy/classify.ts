import { type HeaderRecord, headerValue } from './header-value.js';
import { type RetryAfterReading, readRetryAfter } from './retry-after.js';

/** How one attempt ended: the server answered with a status, or the attempt failed with an error. */
export type AttemptOutcome =
  | { kind: 'response'; status: number; headers?: HeaderRecord }
  | { kind: 'error'; error: unknown };

/**
 * Where an attempt stopped. `connect`: before the request left (nothing was sent). `read`: after
 * the request was written, or at a point that cannot be told apart from it (the server may have
 * done the work). `response`: the server answered.
 */
export type AttemptPhase = 'connect' | 'read' | 'response';

/** What the request being classified allows. */
export interface ClassifyContext {
  /** The request may be applied twice (see `isIdempotent`). */
  idempotent: boolean;
  /**
   * The body can be sent again (no body, a string, a buffer; not a one-shot stream).
   * @default true
   */
  replayable?: boolean;
  /** Current epoch ms, to read a `Retry-After` given as a date. @default Date.now() */
  nowMs?: number;
}

/**
 * The verdict on one failed attempt.
 *
 * `reason` is a stable kebab-case token, fit for a metric label:
 * `status-408` `status-429` `status-500` `status-502` `status-503` `status-504`,
 * `connect-refused` `connect-timeout` `connect-unreachable` `connect-dns` `connect-no-local-address`
 * `connect-refused-stream`, `read-timeout` `read-reset` `read-broken-pipe` `read-socket-closed`
 * `read-client-closed` `read-stream-reset`,
 * and, when `retry` is false: `not-a-failure` `deterministic-status` `invalid-status`
 * `not-idempotent` `stream-body` `retry-after-too-long` `cancelled` `deadline-exceeded`
 * `deadline-insufficient` `unknown-error`.
 */
export interface Classification {
  /** The failure may be retried (the budget, the attempts left and the deadline still decide). */
  retry: boolean;
  /** Where the attempt stopped. */
  phase: AttemptPhase;
  /** Stable kebab-case cause (see above). */
  reason: string;
  /** Wait the server asked for with `Retry-After` (429, or 503), in ms. */
  retryAfterMs?: number;
  /** The instance is known to be unreachable: retry at once on a different instance, no backoff. */
  anotherInstance: boolean;
}

/** Statuses worth another attempt: the server did not judge the request's content. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

type ErrorKind = { phase: 'connect' | 'read'; reason: string } | { final: string };

const CANCELLED: ErrorKind = { final: 'cancelled' };

/** Which timeout an error code says fired: undici's and prazo's own (the one table of them). */
const TIMEOUT_CODES: Readonly<Record<string, 'connect' | 'read'>> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'read',
  UND_ERR_BODY_TIMEOUT: 'read',
  READ_TIMEOUT: 'read',
};

/**
 * The timeout an error `code` reports: `'connect'` (undici's `UND_ERR_CONNECT_TIMEOUT`, prazo's
 * `CONNECT_TIMEOUT`), `'read'` (undici's headers and body timeouts, prazo's `READ_TIMEOUT`), or
 * `undefined` for any other code.
 *
 * @example
 * timeoutOfCode('UND_ERR_HEADERS_TIMEOUT'); // 'read'
 */
export function timeoutOfCode(code: string | undefined): 'connect' | 'read' | undefined {
  return code !== undefined && Object.hasOwn(TIMEOUT_CODES, code) ? TIMEOUT_CODES[code] : undefined;
}

/**
 * The `code` of an error, or of its direct `cause` when it has none of its own (the one prazo
 * reports on an attempt: `errorCode`).
 */
export function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (error as { cause?: unknown }).cause;
  if (typeof cause === 'object' && cause !== null) {
    const inner = (cause as { code?: unknown }).code;
    if (typeof inner === 'string') return inner;
  }
  return undefined;
}

/**
 * A failed attempt's error, judged once: its {@link Classification}, its `code` ({@link codeOf})
 * and the timeout that code reports ({@link timeoutOfCode}). The attempt step makes it; the steps
 * above read it, never judge the error again.
 */
export interface ErrorVerdict {
  readonly classification: Classification;
  readonly code: string | undefined;
  readonly timeout: 'connect' | 'read' | undefined;
}

/** Judges `error`, the failure of one attempt of a request that `context` describes. Never throws. */
export function judgeError(error: unknown, context: ClassifyContext): ErrorVerdict {
  let code: string | undefined;
  try {
    code = codeOf(error);
  } catch {
    // A hostile object (a throwing getter): no code.
  }
  return { classification: classify({ kind: 'error', error }, context), code, timeout: timeoutOfCode(code) };
}

/**
 * What an answer's status says, for every step that reads one: the one home of these rules.
 *
 * - `kind`: `'success'` below 400; `'retryable'` for {@link RETRYABLE_STATUSES} (408, 429, 500, 502,
 *   503, 504: another attempt may be answered otherwise); `'final'` for any other status, which no
 *   retry would change (400, 404, 422, 501 …: the server decided on the request).
 * - `failed`: a 5xx (or a status past 599): the dependency failed at its work. An error in the live
 *   latency window, a failure of the call (`request-end`), no sample for the concurrency limit.
 * - `refused`: 429, 502, 503, 504: the dependency (or a proxy in front of it) did not take the work
 *   — overload: a drop for the concurrency limit, not accepted by the adaptive throttle.
 *
 * A retryable answer is retried only as {@link classify} allows (idempotency, the body, `Retry-After`);
 * whether the call may be retried at all is the retry step's, with the budget and the deadline.
 *
 * @example
 * judgeStatus(404); // { kind: 'final', failed: false, refused: false }
 * judgeStatus(503); // { kind: 'retryable', failed: true, refused: true }
 */
export function judgeStatus(status: number): AnswerVerdict {
  if (status < 400) return SUCCESS;
  if (!RETRYABLE_STATUSES.has(status)) return status >= 500 ? FINAL_SERVER_ERROR : FINAL;
  if (status === 408) return RETRYABLE;
  if (status === 429) return TOO_MANY_REQUESTS;
  return status === 500 ? SERVER_ERROR : GATEWAY;
}

/** The verdict on an answer's status ({@link judgeStatus}): one frozen object per kind of status. */
export interface AnswerVerdict {
  readonly kind: 'success' | 'final' | 'retryable';
  /** A 5xx: the dependency failed at its work. */
  readonly failed: boolean;
  /** 429, 502, 503, 504: the dependency did not take the work (overload). */
  readonly refused: boolean;
}

const answer = (kind: AnswerVerdict['kind'], failed: boolean, refused: boolean): AnswerVerdict =>
  Object.freeze({ kind, failed, refused });
const SUCCESS = answer('success', false, false);
const FINAL = answer('final', false, false);
const FINAL_SERVER_ERROR = answer('final', true, false);
const RETRYABLE = answer('retryable', false, false);
const TOO_MANY_REQUESTS = answer('retryable', false, true);
const SERVER_ERROR = answer('retryable', true, false);
const GATEWAY = answer('retryable', true, true);

/** A status no retry would change: below 400, or a failure the server decided on (404, 422 …). */
export function isFinalStatus(status: number): boolean {
  return judgeStatus(status).kind !== 'retryable';
}

/** Codes of failures before any byte of the request was sent (undici's and Node's), timeouts aside. */
const CONNECT_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connect-refused',
  EHOSTUNREACH: 'connect-unreachable',
  ENETUNREACH: 'connect-unreachable',
  EHOSTDOWN: 'connect-unreachable',
  ENOTFOUND: 'connect-dns',
  EAI_AGAIN: 'connect-dns',
  EADDRNOTAVAIL: 'connect-no-local-address',
};

/** Codes of failures after the request may have reached the server, timeouts aside. */
const READ_CODES: Readonly<Record<string, string>> = {
  ECONNRESET: 'read-reset',
  EPIPE: 'read-broken-pipe',
  UND_ERR_SOCKET: 'read-socket-closed',
  UND_ERR_CLOSED: 'read-client-closed',
};

/** Codes that end the request for good: the caller gave up, or time ran out. */
const FINAL_CODES: Readonly<Record<string, string>> = {
  CANCELLED: 'cancelled',
  UND_ERR_ABORTED: 'cancelled',
  UND_ERR_ABORT: 'cancelled',
  ABORT_ERR: 'cancelled',
  DEADLINE_EXCEEDED: 'deadline-exceeded',
  DEADLINE_INSUFFICIENT: 'deadline-insufficient',
};

// How deep to follow `cause`: wrappers rarely nest more than three levels; a cycle must not hang.
const MAX_CAUSE_DEPTH = 8;

/**
 * Decides whether a failed attempt may be retried, and how.
 *
 * - **Statuses** 408, 429, 500, 502, 503, 504 are retryable; every other status is final (the
 *   server decided on the content: repeating a 400, 404 or 422 is load with no chance). A 429, and a
 *   503, carry the server's `Retry-After` in `retryAfterMs`; a `Retry-After` above one day makes
 *   the failure final (`retry-after-too-long`); a malformed one is ignored.
 * - **Errors** are read from `error.code`, following `error.cause` (outermost recognised code
 *   wins, so prazo's own `READ_TIMEOUT` around the abort it caused is a read timeout, not a
 *   cancellation). Connect phase: refused, connect timeout, unreachable, DNS failure — nothing was
 *   sent, so even a non-idempotent request is retried, at once, on another instance. Read phase:
 *   headers/body timeout, reset, broken pipe, closed socket — the server may have done the work.
 *   `ETIMEDOUT` counts as connect only when its `syscall` is `connect`.
 * - A **non-idempotent** request is retried only after a connect-phase failure or a 429 (the
 *   server refused before doing anything); otherwise it is never sent twice.
 * - A **non-replayable body** (a one-shot stream) is never retried, whatever the phase: undici
 *   destroys a stream body when the request fails, even before connecting.
 * - Caller aborts (`CANCELLED`, `AbortError`, `TimeoutError` of the caller's own signal,
 *   `UND_ERR_ABORTED`) and deadline expiry are never retried. Unknown errors are not retried
 *   either: a retry must be justified, and an unknown error may have been raised after the work
 *   was done. They are reported in the `read` phase, the conservative assumption.
 *
 * Pure and total: never throws, whatever `outcome` holds.
 *
 * @example
 * classify({ kind: 'response', status: 503 }, { idempotent: true });
 * // { retry: true, phase: 'response', reason: 'status-503', anotherInstance: false }
 * classify({ kind: 'error', error: { code: 'ECONNREFUSED' } }, { idempotent: false });
 * // { retry: true, phase: 'connect', reason: 'connect-refused', anotherInstance: true }
 * @see The source article, "erro repetível e erro determinístico"; RFC 9110 §9.2.2, §15.5.20.
 */
export function classify(outcome: AttemptOutcome, context: ClassifyContext): Classification {
  try {
    const idempotent = context?.idempotent === true;
    const replayable = context?.replayable !== false;
    if (outcome?.kind === 'response') {
      return classifyStatus(outcome.status, outcome.headers, idempotent, replayable, context?.nowMs);
    }
    if (outcome?.kind === 'error')
      return classifyError(outcome.error, idempotent, replayable, context?.nowMs);
  } catch {
    // Only a hostile object (a throwing getter or Proxy) gets here.
  }
  return { retry: false, phase: 'read', reason: 'unknown-error', anotherInstance: false };
}

function classifyStatus(
  status: unknown,
  headers: HeaderRecord | undefined,
  idempotent: boolean,
  replayable: boolean,
  nowMs: number | undefined,
): Classification {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    return final('response', 'invalid-status');
  }
  const kind = judgeStatus(status).kind;
  if (kind === 'success') return final('response', 'not-a-failure');
  if (kind === 'final') return final('response', 'deterministic-status');

  let reading: RetryAfterReading = { kind: 'absent' };
  if (status === 429 || status === 503) {
    reading = readRetryAfter(headerValue(headers, 'retry-after'), nowMs ?? Date.now());
  }
  const verdict = (retry: boolean, reason: string): Classification =>
    reading.kind === 'wait'
      ? { retry, phase: 'response', reason, retryAfterMs: reading.ms, anotherInstance: false }
      : { retry, phase: 'response', reason, anotherInstance: false };

  // A 429 is a refusal before any work: the one status a non-idempotent request may repeat.
  if (!idempotent && status !== 429) return verdict(false, 'not-idempotent');
  if (!replayable) return verdict(false, 'stream-body');
  if (reading.kind === 'too-long') return verdict(false, 'retry-after-too-long');
  return verdict(true, `status-${status}`);
}

function classifyError(
  error: unknown,
  idempotent: boolean,
  replayable: boolean,
  nowMs: number | undefined,
): Classification {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth += 1) {
    if (typeof current !== 'object' || current === null) break;
    const record = current as Record<string, unknown>;
    // undici's response-error interceptor turns a status into an error; judge the status.
    if (record['code'] === 'UND_ERR_RESPONSE' && typeof record['statusCode'] === 'number') {
      const headers = record['headers'];
      return classifyStatus(
        record['statusCode'],
        typeof headers === 'object' && headers !== null ? (headers as HeaderRecord) : undefined,
        idempotent,
        replayable,
        nowMs,
      );
    }
    const kind = kindOf(record) ?? kindOfAggregate(record);
    if (kind !== undefined) {
      if ('final' in kind) return final('read', kind.final);
      if (kind.phase === 'read' && !idempotent) return final('read', 'not-idempotent');
      if (!replayable) return final(kind.phase, 'stream-body');
      return {
        retry: true,
        phase: kind.phase,
        reason: kind.reason,
        anotherInstance: kind.phase === 'connect',
      };
    }
    current = record['cause'];
  }
  return final('read', 'unknown-error');
}

/** `table[code]` for the table's own entries only: a code such as `__proto__` or `constructor` is no entry. */
function lookup(table: Readonly<Record<string, string>>, code: string): string | undefined {
  return Object.hasOwn(table, code) ? table[code] : undefined;
}

function kindOf(record: Record<string, unknown>): ErrorKind | undefined {
  const code = record['code'];
  if (typeof code === 'string') {
    const finalReason = lookup(FINAL_CODES, code);
    if (finalReason !== undefined) return { final: finalReason };
    const timeout = timeoutOfCode(code);
    if (timeout !== undefined) return { phase: timeout, reason: `${timeout}-timeout` };
    const connect = lookup(CONNECT_CODES, code);
    if (connect !== undefined) return { phase: 'connect', reason: connect };
    if (code === 'ETIMEDOUT') {
      return record['syscall'] === 'connect'
        ? { phase: 'connect', reason: 'connect-timeout' }
        : { phase: 'read', reason: 'read-timeout' };
    }
    const read = lookup(READ_CODES, code);
    if (read !== undefined) return { phase: 'read', reason: read };
    // An HTTP/2 stream the server reset (RST_STREAM): REFUSED_STREAM says it was closed before any
    // processing (RFC 9113 §8.7) — nothing done, as a refused connect; any other code (INTERNAL_ERROR,
    // CANCEL …) may come after the work, as a reset connection. undici 8 gives the code as a number;
    // undici 7 and Node say it only in the message.
    if (code === 'ERR_HTTP2_STREAM_ERROR')
      return refusedStream(record)
        ? { phase: 'connect', reason: 'connect-refused-stream' }
        : { phase: 'read', reason: 'read-stream-reset' };
  }
  const name = record['name'];
  // The caller's own signal: AbortController.abort() or AbortSignal.timeout().
  if (name === 'AbortError' || name === 'TimeoutError') return CANCELLED;
  return undefined;
}

/** HTTP/2's REFUSED_STREAM (error code 7): the server closed the stream before processing it. */
function refusedStream(record: Record<string, unknown>): boolean {
  if (record['http2ErrorCode'] === 7) return true;
  const message = record['message'];
  return typeof message === 'string' && message.includes('NGHTTP2_REFUSED_STREAM');
}

/** Node's happy-eyeballs connect reports one error per address tried in `errors`. */
function kindOfAggregate(record: Record<string, unknown>): ErrorKind | undefined {
  const errors = record['errors'];
  if (!Array.isArray(errors)) return undefined;
  for (const item of errors.slice(0, MAX_CAUSE_DEPTH)) {
    if (typeof item === 'object' && item !== null) {
      const kind = kindOf(item as Record<string, unknown>);
      if (kind !== undefined) return kind;
    }
  }
  return undefined;
}

function final(phase: AttemptPhase, reason: string): Classification {
  return { retry: false, phase, reason, anotherInstance: false };
}
