import { exchangeFor } from './exchange.js';
import type { Transport } from './transport.js';

/**
 * undici's `dispatch(options, handler)`, as an interceptor receives it (duck-typed: prazo imports
 * nothing from undici for it, so the application's undici — 7 or 8 — is the one that runs).
 */
// Its parameters are left open on purpose: undici 7's and 8's `Dispatcher['dispatch']` types (their own
// `DispatchOptions` and handler types, which differ between versions) must fit it, and it them, so that
// `agent.compose(prazoInterceptor(…))` type-checks against whichever undici the application has.
// biome-ignore lint/suspicious/noExplicitAny: the application's undici types, whichever version
export type DispatchFunction = (options: any, handler: any) => boolean;

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
 * application's; each attempt is one `dispatch()` of an object literal of fixed shape to its
 * exchange (`exchange.ts`: the attempt itself), exactly as prazo's own pools get it. `close()`
 * closes nothing (the dispatcher is not prazo's).
 *
 * The dispatcher may be undici 8 or 7 (they call the controller-based API) or an undici 6 that
 * Node's bundled `fetch` created as the global dispatcher before any newer copy loaded (it calls only
 * the older `onConnect`/`onHeaders`/… callbacks): the exchange answers both.
 */
export function createDispatchTransport(
  origins: readonly string[],
  dispatch: () => DispatchFunction,
): Transport {
  return {
    origins,
    send(request, signal) {
      const body = request.requestBody;
      const exchange = exchangeFor(request);
      const promise = exchange.open(signal, body, request);
      const timeoutMs = request.transportTimeoutMs;
      try {
        dispatch()(
          {
            origin: request.origin,
            method: request.method,
            path: request.path,
            headers: request.requestHeaders,
            body: body ?? null,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          exchange,
        );
      } catch (error) {
        exchange.stop(error instanceof Error ? error : new Error(String(error)));
      }
      return promise;
    },
    close() {
      return Promise.resolve();
    },
  };
}
