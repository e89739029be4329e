import { util } from 'undici';
import { ConnectTimeoutError, ReadTimeoutError } from '../errors.js';
import { IncomingBody } from './incoming-body.js';
import type { AbortLike, TransportResponse } from './transport.js';

/** undici's abort callback for one request (given to the handler when the request is written). */
type AbortRequest = (reason?: Error) => void;

/**
 * One attempt's exchange with an undici pool: the dispatch handler that turns undici's callbacks
 * into a promise of the status and headers, and feeds an {@link IncomingBody}.
 *
 * prazo drives `pool.dispatch()` with this handler instead of calling `pool.request()`, which
 * wraps every request in an `AsyncResource`, follows an abort signal with a listener and a
 * closure, and builds a `Readable` for every body. Here the attempt object is the abort handle and
 * this handler is its listener (`handleEvent`), and a body becomes a stream only if the caller
 * streams it. It uses undici 7's handler interface (`onConnect`, `onHeaders`, `onData`,
 * `onComplete`, `onError`), the one undici's own `request()` uses.
 */
export class Exchange {
  readonly promise: Promise<TransportResponse>;
  #resolve!: (response: TransportResponse) => void;
  #reject!: (error: unknown) => void;
  readonly #signal: AbortLike;
  readonly #requestBody: unknown;
  #abort: AbortRequest | null = null;
  /** undici's `resume` for this response, while it is open. */
  #resumeConnection: (() => void) | null = null;
  #body: IncomingBody | null = null;
  /** The promise is settled (headers arrived, or the exchange failed or was aborted first). */
  #settled = false;
  #aborted: Error | null = null;

  constructor(signal: AbortLike, requestBody: unknown) {
    this.promise = new Promise<TransportResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#signal = signal;
    this.#requestBody = requestBody;
    if (signal.aborted) this.abort(toError(signal.reason));
    else signal.addEventListener('abort', this);
  }

  /** The attempt was aborted (its timeout, a winning hedge copy, the caller's signal). */
  handleEvent(): void {
    this.abort(toError(this.#signal.reason));
  }

  /**
   * Stops the exchange with `reason`. Before the request is written (still queued in the pool) the
   * promise rejects at once and the request is dropped when its turn comes; after, undici closes
   * the connection.
   */
  abort(reason: Error): void {
    if (this.#abort !== null) {
      this.#abort(reason);
      return;
    }
    if (this.#aborted !== null || this.#settled) return;
    this.#aborted = notSent(reason);
    this.#fail(this.#aborted);
  }

  /** The body's way back to the connection. */
  resume(): void {
    this.#resumeConnection?.();
  }

  // --- undici's handler interface -------------------------------------------------------------

  onConnect(abort: AbortRequest): void {
    // Aborted while queued: drop the request without writing it. Throwing here makes undici fail
    // just this request and keep the connection for the next one; calling `abort` would destroy the
    // connection, though nothing was sent on it.
    if (this.#aborted !== null) throw this.#aborted;
    this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the final response follows
    const body = new IncomingBody(this);
    this.#body = body;
    this.#resumeConnection = resume;
    this.#settled = true;
    this.#resolve({
      statusCode,
      headers: util.parseHeaders(rawHeaders) as TransportResponse['headers'],
      body,
    });
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.#body!.push(chunk);
  }

  onComplete(): void {
    this.#body!.end();
    this.#release();
  }

  onError(error: Error): void {
    if (this.#body !== null) this.#body.fail(error);
    else this.#fail(error);
    // A stream body that was being sent stops here too.
    const sent = this.#requestBody as { destroy?: (error: Error) => void } | null | undefined;
    if (typeof sent === 'object' && sent !== null && typeof sent.destroy === 'function') sent.destroy(error);
    this.#release();
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
  }

  #release(): void {
    this.#abort = null;
    this.#resumeConnection = null;
    this.#signal.removeEventListener('abort', this);
  }
}

/**
 * The error of an attempt stopped before its request was written. undici hands a request its
 * connection (`onConnect`) just before writing it, so until then nothing has reached the server:
 * the attempt was still connecting, or waiting for a free connection. When its own timeout is what
 * stopped it, that is a connect-phase timeout — safe to send again, even a POST, and on another
 * instance — whatever timer won the race (with equal connect and read timeouts, either may).
 * Other reasons (the deadline, the caller, a winning hedge copy) stay as they are.
 */
function notSent(reason: Error): Error {
  if (!(reason instanceof ReadTimeoutError)) return reason;
  const ms = reason.timeoutMs === undefined ? '' : ` ${reason.timeoutMs} ms`;
  return new ConnectTimeoutError(
    `No connection within the attempt's${ms} timeout (still connecting, or waiting for a free connection): the request was not sent.`,
    reason.timeoutMs === undefined ? { cause: reason } : { cause: reason, timeoutMs: reason.timeoutMs },
  );
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
