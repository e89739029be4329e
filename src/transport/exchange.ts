import type { IncomingHttpHeaders } from 'node:http';
import { ConnectTimeoutError, ReadTimeoutError } from '../errors.js';
import { IncomingBody } from './incoming-body.js';
import type { AbortLike, OutgoingRequest, TransportResponse } from './transport.js';

/**
 * What an exchange uses of undici's per-request controller: the same methods on undici 7 (its
 * `UnwrapController`) and undici 8 (its `RequestController`).
 */
export interface RequestController {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

/**
 * One attempt's exchange with an undici dispatcher: the dispatch handler that turns undici's
 * callbacks into a promise of the status and headers, and feeds an {@link IncomingBody}.
 *
 * prazo drives `dispatch()` with this handler instead of calling `request()`, which wraps every
 * request in an `AsyncResource`, follows an abort signal with a listener and a closure, and builds
 * a `Readable` for every body. Here the attempt is the abort handle, this handler its listener
 * (`handleEvent`), and a body becomes a stream only if the caller streams it. prazo's attempt
 * (`engine/steps/attempt.ts`) **is** an exchange (it extends this class): the transport opens the
 * attempt itself (`open`), and one attempt is one object. A request that is not an exchange (a
 * test's) gets one of its own.
 *
 * It speaks undici's controller-based handler API (`onRequestStart`, `onResponseStart`,
 * `onResponseData`, `onResponseEnd`, `onResponseError`), the only one undici 8 has. undici 7 takes
 * it through an adapter of its own (an `UnwrapHandler` and its controller per request, which turn
 * its older callbacks into these); undici 8 calls it directly, with a controller it creates for
 * every request anyway. The adapter is too cheap to justify a second handler for undici 7's older
 * callbacks: it adds 15–24 ns per request to the exchange on a quiet machine, 64–180 ns on a loaded
 * one (`bench/handler-adapter.bench.ts`, undici 7.30.2, Node 20); such a second handler, tried,
 * measured within 0.1 µs of the adapted one, and end to end the two could not be told apart (−1.4
 * to +0.5 µs of client CPU per request, inside the run-to-run noise).
 *
 * It also answers those older callbacks (`onConnect`, `onHeaders`, `onData`, `onComplete`,
 * `onError`) for an undici 6 dispatcher — one that Node's bundled `fetch` created as the global
 * dispatcher before any newer copy loaded, which an interceptor may be composed onto: undici 7 and
 * 8 see `onRequestStart` and use the controller-based API only.
 */
export class Exchange implements TransportResponse {
  /** The final status, once the response has started (0 before). */
  statusCode = 0;
  /** The response's headers, once it has started. */
  headers: TransportResponse['headers'] = NO_HEADERS;
  #resolve: (response: TransportResponse) => void = ignore;
  #reject: (error: unknown) => void = ignore;
  #signal: AbortLike | null = null;
  #requestBody: unknown = undefined;
  #request: OutgoingRequest | null = null;
  /** undici's controller of this request, from the moment it is written until it ends. */
  #controller: RequestController | null = null;
  #body: IncomingBody | null = null;
  /** The promise is settled (headers arrived, or the exchange failed or was aborted first). */
  #settled = false;
  #aborted: Error | null = null;
  /** What undici 6's older API offers instead of a controller: its abort, and its resume after a pause. */
  #legacy: LegacyController | null = null;

  /**
   * Starts the exchange of `request` (its body `requestBody`), aborted through `signal`, and
   * returns its promise, which settles with this exchange itself once the status and headers are in
   * (`statusCode`, `headers`, `body`): the answer is read from the object the attempt already is.
   * The transport dispatches it next. A signal already aborted fails it at once (nothing is sent).
   */
  open(
    signal: AbortLike,
    requestBody: unknown,
    request: OutgoingRequest | null = null,
  ): Promise<TransportResponse> {
    // The promise's executor is one function for every exchange, not a closure made per exchange.
    const promise = new Promise<TransportResponse>(capture);
    this.#resolve = captured.resolve!;
    this.#reject = captured.reject!;
    captured.resolve = null;
    captured.reject = null;
    this.#signal = signal;
    this.#requestBody = requestBody;
    this.#request = request;
    if (signal.aborted) this.stop(toError(signal.reason));
    else signal.addEventListener('abort', this);
    return promise;
  }

  /** The attempt was aborted (its timeout, a winning hedge copy, the caller's signal). */
  handleEvent(): void {
    this.stop(toError(this.#signal!.reason));
  }

  /**
   * Stops the exchange with `reason`. Before the request is written (still queued in the pool) the
   * promise rejects at once and the request is dropped when its turn comes; after, undici closes
   * the connection.
   */
  stop(reason: Error): void {
    if (this.#controller !== null) {
      this.#controller.abort(reason);
      return;
    }
    if (this.#aborted !== null || this.#settled) return;
    this.#aborted = notSent(reason);
    this.#fail(this.#aborted);
  }

  /** The response's body, once it has started (the exchange feeds it). */
  get body(): IncomingBody {
    return this.#body!;
  }

  /** The body's way back to the connection, after it asked for a pause. */
  resume(): void {
    this.#controller?.resume();
  }

  // --- undici's controller-based handler API ---------------------------------------------------

  onRequestStart(controller: RequestController, _context: unknown): void {
    // Aborted while queued: drop the request without writing it. Throwing here makes undici (7 and
    // 8) fail just this request and keep the connection for the next one; `controller.abort()`
    // would destroy the connection, though nothing was sent on it.
    if (this.#aborted !== null) throw this.#aborted;
    this.#controller = controller;
    this.#request?.written?.();
  }

  onResponseStart(
    controller: RequestController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // 1xx: the final response follows
    const body = new IncomingBody(this);
    if (statusMessage) body.statusMessage = statusMessage;
    // undici 7 and 8 both keep the unparsed headers on the controller.
    const raw = (controller as { rawHeaders?: unknown }).rawHeaders;
    if (Array.isArray(raw)) body.rawHeaders = raw as Buffer[];
    this.#body = body;
    this.statusCode = statusCode;
    this.headers = headers as TransportResponse['headers'];
    this.#settled = true;
    this.#resolve(this);
  }

  onResponseData(controller: RequestController, chunk: Buffer): void {
    // undici hands over an empty chunk when a paused parser resumes in the middle of a body; passed
    // on, it could fill a consumer's queue (a web stream counts chunks, not bytes) and pause the
    // connection again before any byte came in: resumed at once, paused again, forever.
    if (chunk.length === 0) return;
    // The body is full (unread past its limit, or its stream wants no more): pause the connection
    // until the body calls `resume()`.
    if (!this.#body!.push(chunk)) controller.pause();
  }

  onResponseEnd(_controller: RequestController, _trailers: unknown): void {
    this.#body!.end();
    this.#release();
  }

  /** `controller` is null (undici 8) or undefined (undici 7) when the dispatch itself failed. */
  onResponseError(_controller: RequestController | null | undefined, error: Error): void {
    if (this.#body !== null) this.#body.fail(error);
    else this.#fail(error);
    // A stream body that was being sent stops here too.
    const sent = this.#requestBody as { destroy?: (error: Error) => void } | null | undefined;
    if (typeof sent === 'object' && sent !== null && typeof sent.destroy === 'function') sent.destroy(error);
    this.#release();
  }

  // --- undici 6's older handler API ----------------------------------------------------------

  onConnect(abort: (reason: Error) => void): void {
    const legacy: LegacyController = {
      abortWith: abort,
      resumeWith: null,
      paused: false,
      rawHeaders: null,
      abort: (reason: Error) => legacy.abortWith?.(reason),
      pause: () => {
        legacy.paused = true;
      },
      resume: () => {
        if (!legacy.paused) return;
        legacy.paused = false;
        legacy.resumeWith?.();
      },
    };
    this.#legacy = legacy;
    try {
      this.onRequestStart(legacy, undefined);
    } catch (error) {
      abort(error as Error); // aborted while queued: dropped, not written
    }
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText?: string): boolean {
    const legacy = this.#legacy!;
    legacy.resumeWith = resume;
    legacy.rawHeaders = rawHeaders;
    this.onResponseStart(legacy, statusCode, headersOf(rawHeaders), statusText);
    return !legacy.paused;
  }

  onData(chunk: Buffer): boolean {
    const legacy = this.#legacy!;
    this.onResponseData(legacy, chunk);
    return !legacy.paused;
  }

  onComplete(trailers: unknown): void {
    this.onResponseEnd(this.#legacy!, trailers);
    this.#legacy = null;
  }

  onError(error: Error): void {
    this.onResponseError(this.#legacy, error);
    this.#legacy = null;
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
  }

  #release(): void {
    this.#controller = null;
    this.#signal?.removeEventListener('abort', this);
  }
}

/**
 * The exchange that drives `request`: the request itself when it is one (prazo's attempt), else a
 * new one.
 */
export function exchangeFor(request: OutgoingRequest): Exchange {
  return request instanceof Exchange ? request : new Exchange();
}

/** undici 6's abort and resume, as a controller (see {@link Exchange.onConnect}). */
interface LegacyController extends RequestController {
  abortWith: ((reason: Error) => void) | null;
  resumeWith: (() => void) | null;
  paused: boolean;
  /** The unparsed headers, where the newer API keeps them (`onResponseStart` reads them there). */
  rawHeaders: Buffer[] | null;
}

/** The headers of undici 6's `onHeaders`, as the newer API hands them. */
function headersOf(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  return headers;
}

function ignore(): void {}

/** The headers of an exchange whose response has not started. */
const NO_HEADERS: TransportResponse['headers'] = Object.freeze({});

/** The resolving functions of the promise {@link capture} last ran for (`open` takes them at once). */
const captured: {
  resolve: ((response: TransportResponse) => void) | null;
  reject: ((error: unknown) => void) | null;
} = { resolve: null, reject: null };

/** The executor of every exchange's promise: it runs synchronously, inside `new Promise()`. */
function capture(resolve: (response: TransportResponse) => void, reject: (error: unknown) => void): void {
  captured.resolve = resolve;
  captured.reject = reject;
}

/**
 * The error of an attempt stopped before its request was written. undici hands a request its
 * controller (`onRequestStart`) just before writing it, so until then nothing has reached the
 * server: the attempt was still connecting, or waiting for a free connection. When its own timeout
 * is what stopped it, that is a connect-phase timeout — safe to send again, even a POST, and on
 * another instance — whatever timer won the race (with equal connect and read timeouts, either
 * may). Other reasons (the deadline, the caller, a winning hedge copy) stay as they are.
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
