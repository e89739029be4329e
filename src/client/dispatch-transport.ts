import { Exchange } from './exchange.js';
import type { Transport } from './transport.js';

/**
 * undici's `dispatch(options, handler)`, as an interceptor receives it (duck-typed: prazo imports
 * nothing from undici for it, so the application's undici — 7 or 8 — is the one that runs).
 */
export type DispatchFunction = (options: DispatchOptions, handler: object) => boolean;

/** The dispatch options prazo reads and writes (undici's `Dispatcher.DispatchOptions`). */
export interface DispatchOptions {
  origin?: string | URL;
  path: string;
  method: string;
  headers?: unknown;
  body?: unknown;
  headersTimeout?: number | null;
  bodyTimeout?: number | null;
  [option: string]: unknown;
}

/**
 * A transport over a `dispatch` function it does not own: the one an interceptor composed onto the
 * application's dispatcher is handed. The pools, their connections and their connect timeout are the
 * application's; each attempt is one `dispatch()` of an object literal of fixed shape to an
 * {@link Exchange}, exactly as prazo's own pools get it. `close()` closes nothing (the dispatcher is
 * not prazo's).
 */
export function createDispatchTransport(
  origins: readonly string[],
  dispatch: () => DispatchFunction,
): Transport {
  return {
    origins,
    send(request, signal) {
      const body = request.body;
      const exchange = new Exchange(signal, body);
      const timeoutMs = request.timeoutMs;
      try {
        dispatch()(
          {
            origin: request.origin,
            method: request.method,
            path: request.path,
            headers: request.headers,
            body: body ?? null,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          exchange,
        );
      } catch (error) {
        exchange.abort(error instanceof Error ? error : new Error(String(error)));
      }
      return exchange.promise;
    },
    close() {
      return Promise.resolve();
    },
  };
}
