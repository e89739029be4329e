import type { LookupFunction } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import { InvalidInputError } from '../errors.js';
import { createConnector } from './connector.js';
import { Exchange } from './exchange.js';
import type { Transport } from './transport.js';

/** Options of {@link createPoolTransport}. */
export interface PoolTransportOptions {
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
export function createPoolTransport(options: PoolTransportOptions): Transport {
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
  let closing: Promise<void> | undefined;
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
    close() {
      // Once: undici rejects a second close() of a pool.
      closing ??= Promise.all(Array.from(pools.values(), (pool) => pool.close())).then(() => {});
      return closing;
    },
  };
}

function unknownOrigin(origin: string, origins: readonly string[]): InvalidInputError {
  return new InvalidInputError(
    `${JSON.stringify(origin)} is not one of this transport's origins (${origins.join(', ')}).`,
  );
}
