import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { InvalidInputError } from '../errors.js';
import { createConnector } from './connector.js';
import { Exchange } from './exchange.js';
import type { ResponseBody, ResponseHeaders } from './response.js';

export type { ResponseBody, ResponseHeaders } from './response.js';

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
 * One attempt as the transport sends it. prazo's attempt object is this request (and its abort
 * handle), so sending allocates nothing more; an undici interceptor has the same facts in the
 * dispatch options it is handed (`origin`, `method`, `path`, `headers`, `body`).
 */
export interface OutgoingRequest {
  /** The instance, as a normalised origin (`http://host:port`). */
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  /** A flat `[name, value, …]` list. */
  readonly headers: string[];
  readonly body: RequestBody | undefined;
  /**
   * The attempt's timeout, in ms, handed to the transport's own timers as a safety net (prazo's
   * shared timer enforces it precisely through the abort handle).
   */
  readonly timeoutMs: number;
}

/**
 * The I/O under the client's steps: sends one attempt to an origin. The only piece that knows
 * about undici, and the one a unit test replaces with a fake.
 */
export interface Transport {
  /** The dependency's instances, as normalised origins; the engine's instance numbers index it. */
  readonly origins: readonly string[];
  /**
   * Sends one request. Rejects with the transport's error, or with `signal.reason` once aborted
   * (an attempt aborted before it was written rejects with a connect-phase error: nothing was sent).
   */
  send(request: OutgoingRequest, signal: AbortLike): Promise<TransportResponse>;
  /** Closes every connection; resolves once they are closed. */
  close(): Promise<void>;
}

/** Options of {@link createUndiciTransport}. */
export interface UndiciTransportOptions {
  origins: readonly string[];
  /** Connections per origin. */
  connections: number;
  /** Connect timeout, in ms, enforced to the millisecond (see {@link createConnector}). */
  connectTimeoutMs: number;
  /** Name lookup of the pools' connects (a test fails one origin's DNS locally). @default dns.lookup */
  lookup?: LookupFunction;
  /**
   * The usual per-attempt timeout, in ms: set once on the pools as undici's headers/body timeout,
   * so that a request with this timeout passes none of its own (less work in undici per request).
   */
  timeoutMs?: number;
}

/**
 * The real transport: one undici `Pool` per origin, each owned (created and closed) by the
 * transport. Each request is a `pool.dispatch()` of an object literal of fixed shape (a spread
 * would mint a hidden class per call) to an exchange, which listens to prazo's attempt object for
 * aborts and feeds the body.
 */
export function createUndiciTransport(options: UndiciTransportOptions): Transport {
  const usual = options.timeoutMs;
  const pools = new Map<string, Pool>();
  for (const origin of options.origins) {
    pools.set(
      origin,
      new Pool(origin, {
        connections: options.connections,
        connect: createConnector({
          timeoutMs: options.connectTimeoutMs,
          ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
        }),
        ...(usual === undefined ? {} : { headersTimeout: usual, bodyTimeout: usual }),
      }),
    );
  }
  return {
    origins: options.origins,
    send(request, signal) {
      const pool = pools.get(request.origin);
      if (pool === undefined) return Promise.reject(unknownOrigin(request.origin, options.origins));
      const body = request.body;
      const exchange = new Exchange(signal, body);
      const timeoutMs = request.timeoutMs;
      pool.dispatch(
        {
          method: request.method as 'GET',
          path: request.path,
          headers: request.headers,
          body: (body ?? null) as string | null,
          headersTimeout: timeoutMs === usual ? null : timeoutMs,
          bodyTimeout: timeoutMs === usual ? null : timeoutMs,
        },
        exchange as Dispatcher.DispatchHandler,
      );
      return exchange.promise;
    },
    async close() {
      await Promise.all(Array.from(pools.values(), (pool) => pool.close()));
    },
  };
}

function unknownOrigin(origin: string, origins: readonly string[]): InvalidInputError {
  return new InvalidInputError(
    `${JSON.stringify(origin)} is not one of this transport's origins (${origins.join(', ')}).`,
  );
}
