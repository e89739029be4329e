import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
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
 * The I/O under the client's steps: sends one attempt to instance `instance`. The only piece that
 * knows about undici, and the one a unit test replaces with a fake.
 */
export interface Transport {
  /** The instances, normalised origins, index = instance number. */
  readonly origins: readonly string[];
  /**
   * Sends one request. `headers` is a flat `[name, value, …]` list. `timeoutMs` is handed to the
   * transport's own timers as a safety net (prazo's shared timer enforces it precisely through
   * `signal`). Rejects with the transport's error, or with `signal.reason` once aborted.
   */
  request(
    instance: number,
    method: string,
    path: string,
    headers: string[],
    body: RequestBody | undefined,
    timeoutMs: number,
    signal: AbortLike,
  ): Promise<TransportResponse>;
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
 * The real transport: one undici `Pool` per origin. Each request is a `pool.dispatch()` of an
 * object literal of fixed shape (a spread would mint a hidden class per call) to an
 * {@link Exchange}, which listens to prazo's attempt object for aborts and feeds the body.
 */
export function createUndiciTransport(options: UndiciTransportOptions): Transport {
  const usual = options.timeoutMs;
  const pools = options.origins.map(
    (origin) =>
      new Pool(origin, {
        connections: options.connections,
        connect: createConnector({
          timeoutMs: options.connectTimeoutMs,
          ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
        }),
        ...(usual === undefined ? {} : { headersTimeout: usual, bodyTimeout: usual }),
      }),
  );
  return {
    origins: options.origins,
    request(instance, method, path, headers, body, timeoutMs, signal) {
      const exchange = new Exchange(signal, body);
      pools[instance]!.dispatch(
        {
          method: method as 'GET',
          path,
          headers,
          body: (body ?? null) as string | null,
          headersTimeout: timeoutMs === usual ? null : timeoutMs,
          bodyTimeout: timeoutMs === usual ? null : timeoutMs,
        },
        exchange,
      );
      return exchange.promise;
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.close()));
    },
  };
}
