import type { LookupFunction } from 'node:net';
import type { Dispatcher, Pool } from 'undici';
import { InvalidInputError } from '../errors.js';
import { createConnector } from './connector.js';
import { exchangeFor } from './exchange.js';
import type { Transport } from './transport.js';
import { undici } from './undici-module.js';

/** Options of {@link createPoolTransport}. */
export interface PoolTransportOptions {
  origins: readonly string[];
  /** Connections per origin. */
  connections: number;
  /**
   * Connect timeout, in ms, enforced to the millisecond (see {@link createConnector}); changed for
   * the connects that start afterwards by `Transport.setConnectTimeout`.
   */
  connectTimeoutMs: number;
  /** Name lookup of the pools' connects (a test fails one origin's DNS locally). @default dns.lookup */
  lookup?: LookupFunction;
  /** TLS options of `https:` connections. @default Node's defaults */
  tls?: object;
  /** HTTP/2 with origins that offer it through ALPN. @default false */
  allowH2?: boolean;
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
  let connectTimeoutMs = options.connectTimeoutMs;
  const connect = createConnector({
    timeoutMs: () => connectTimeoutMs,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.allowH2 === true ? { allowH2: true } : {}),
  });
  const open = (origin: string): Pool =>
    new undici.Pool(origin, {
      connections: options.connections,
      connect,
      ...(options.allowH2 === true ? { allowH2: true } : {}),
      ...(usual === undefined ? {} : { headersTimeout: usual, bodyTimeout: usual }),
    });
  for (const origin of options.origins) pools.set(origin, open(origin));
  let origins = options.origins;
  // Pools of removed origins, finishing their requests; close() waits for them too.
  const draining = new Set<Promise<void>>();
  let closing: Promise<void> | undefined;
  return {
    get origins() {
      return origins;
    },
    get connectTimeoutMs() {
      return connectTimeoutMs;
    },
    setConnectTimeout(ms) {
      connectTimeoutMs = ms;
    },
    setOrigins(next) {
      if (closing !== undefined) return;
      const keep = new Set(next);
      for (const [origin, pool] of pools) {
        if (keep.has(origin)) continue;
        pools.delete(origin);
        // undici's close() takes no new request and waits for those queued and running to end.
        const done: Promise<void> = pool.close().then(
          () => {
            draining.delete(done);
          },
          () => {
            draining.delete(done);
          },
        );
        draining.add(done);
      }
      for (const origin of next) if (!pools.has(origin)) pools.set(origin, open(origin));
      origins = next;
    },
    send(request, signal) {
      const pool = pools.get(request.origin);
      if (pool === undefined) return Promise.reject(unknownOrigin(request.origin, origins));
      const body = request.requestBody;
      const exchange = exchangeFor(request);
      const promise = exchange.open(signal, body, request);
      const timeoutMs = request.transportTimeoutMs;
      pool.dispatch(
        {
          method: request.method as 'GET',
          path: request.path,
          headers: request.requestHeaders,
          body: (body ?? null) as string | null,
          headersTimeout: timeoutMs === usual ? null : timeoutMs,
          bodyTimeout: timeoutMs === usual ? null : timeoutMs,
        },
        exchange as Dispatcher.DispatchHandler,
      );
      return promise;
    },
    close() {
      // Once: undici rejects a second close() of a pool.
      closing ??= Promise.all([...Array.from(pools.values(), (pool) => pool.close()), ...draining]).then(
        () => {},
      );
      return closing;
    },
  };
}

function unknownOrigin(origin: string, origins: readonly string[]): InvalidInputError {
  return new InvalidInputError(
    `${JSON.stringify(origin)} is not one of this transport's origins (${origins.join(', ')}).`,
  );
}
