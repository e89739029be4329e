import type { Readable } from 'node:stream';
import type { ResponseBody, ResponseHeaders } from './response-body.js';

export type { ResponseBody, ResponseHeaders } from './response-body.js';

/**
 * How far past prazo's own bound the transport's safety-net timers are set, in ms. undici runs its
 * headers and body timeouts on a coarse clock of its own that ticks every 499 ms and counts an armed
 * timer from the tick before the one that activated it: depending on where a timeout falls between
 * two ticks, it fires up to half a second **early**. Set 25 ms past the deadline, undici's headers
 * timer ended attempts that prazo had decided should wait for the deadline up to 0.5 s before it
 * (`UND_ERR_HEADERS_TIMEOUT`, reported as `READ_TIMEOUT`). A second past the bound, it never fires
 * first: prazo's own timer ends the attempt, with its own code.
 */
export const TRANSPORT_MARGIN_MS = 1_000;

/**
 * The transport's safety-net bound for an attempt that prazo ends itself by `boundMs` (its read
 * timeout, or the time left before the deadline): {@link TRANSPORT_MARGIN_MS} past it. The pools'
 * usual timeout and each attempt's bound both come from here, so that an attempt with the usual
 * read timeout passes none of its own (`pool-transport.ts` compares the two).
 */
export function transportBoundMs(boundMs: number): number {
  return boundMs + TRANSPORT_MARGIN_MS;
}

/** A request body: strings and bytes can be sent again; a stream only once. */
export type RequestBody = string | Uint8Array | Readable | AsyncIterable<Uint8Array>;

/** What the transport resolves with: the status line and headers, the body still unread. */
export interface TransportResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: ResponseBody;
}

/** An abort listener: a function, or an object with `handleEvent()` (as `EventTarget` takes them). */
export type AbortListener = (() => void) | { handleEvent(): void };

/**
 * The least an abort signal must offer a transport: `aborted`, `reason` and abort listeners. prazo
 * passes its own small attempt object instead of an `AbortSignal`, which costs microseconds to
 * create and to listen to.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

/**
 * One attempt as the transport sends it. prazo's attempt object is this request, its abort handle
 * and its exchange (`exchange.ts`), so sending allocates nothing more; an undici interceptor has the
 * same facts in the dispatch options it is handed (`origin`, `method`, `path`, `headers`, `body`).
 */
export interface OutgoingRequest {
  /** The instance, as a normalised origin (`http://host:port`). */
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  /** A flat `[name, value, …]` list. (Not `headers`: an attempt is also its exchange, whose `headers` are the answer's.) */
  readonly requestHeaders: string[];
  /** (Not `body`: an attempt's `body` is the answer's.) */
  readonly requestBody: RequestBody | undefined;
  /**
   * The attempt's read timeout, in ms (prazo's shared timer enforces it through the abort handle).
   */
  readonly timeoutMs: number;
  /**
   * The transport's own timers' bound, in ms from the start: a safety net only, past the latest the
   * attempt can end by prazo's timer — the read timeout, or the time left before the deadline when
   * prazo may let the attempt wait past its read timeout (`lastAttempt: 'deadline'`) — by
   * {@link TRANSPORT_MARGIN_MS}, so that no transport timer ends an attempt before prazo does.
   */
  readonly transportTimeoutMs: number;
  /**
   * Called by a transport that knows it, once, when a connection takes the request (just before it
   * is written): the end of the attempt's connect phase.
   */
  written?(): void;
}

/**
 * The I/O under the client's steps: sends one attempt to an origin. Implemented over pools prazo
 * owns by `createPoolTransport` (`pool-transport.ts`); a unit test replaces it with a fake.
 */
export interface Transport {
  /** The dependency's instances, as normalised origins; the engine's instance numbers index it. */
  readonly origins: readonly string[];
  /**
   * Sends one request. Rejects with the transport's error, or with `signal.reason` once aborted;
   * an attempt that its own `READ_TIMEOUT` stops before its request was written rejects with
   * `CONNECT_TIMEOUT` instead (nothing was sent: safe to send again, even a POST).
   */
  send(request: OutgoingRequest, signal: AbortLike): Promise<TransportResponse>;
  /**
   * Replaces the set of origins (live membership): an added origin can be sent to at once; a
   * removed one takes no new request, finishes those it holds, then closes its connections.
   * Required of a transport under a dependency whose `origins` is a resolver.
   */
  setOrigins?(origins: readonly string[]): void;
  /**
   * The connect timeout this transport enforces, in ms: present on a transport that makes its own
   * connections (prazo's pools), absent on one whose connections are another's (the interceptor's:
   * the application's dispatcher sets its connect timeout).
   */
  readonly connectTimeoutMs?: number;
  /** Enforces `ms` as the connect timeout of every connect that starts from now on (with `connectTimeoutMs`). */
  setConnectTimeout?(ms: number): void;
  /**
   * Closes every connection, those of removed origins still finishing included; resolves once they
   * are closed. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}
