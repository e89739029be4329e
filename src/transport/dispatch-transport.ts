import type { IncomingHttpHeaders } from 'node:http';
import { Exchange, type RequestController } from './exchange.js';
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
 * application's; each attempt is one `dispatch()` of an object literal of fixed shape to an
 * {@link Exchange}, exactly as prazo's own pools get it. `close()` closes nothing (the dispatcher is
 * not prazo's).
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
      const body = request.body;
      const exchange = new BilingualExchange(signal, body);
      const timeoutMs = request.transportTimeoutMs;
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

/**
 * An exchange that also answers undici's older handler callbacks, for an undici 6 dispatcher: undici
 * 7 and 8 see `onRequestStart` and use the controller-based API only.
 */
class BilingualExchange extends Exchange {
  /** What the older API offers instead of a controller: its abort, and its resume after a pause. */
  #legacy:
    | (RequestController & {
        abortWith: ((reason: Error) => void) | null;
        resumeWith: (() => void) | null;
        paused: boolean;
        rawHeaders: Buffer[] | null;
      })
    | null = null;

  onConnect(abort: (reason: Error) => void): void {
    const legacy = {
      abortWith: abort as ((reason: Error) => void) | null,
      resumeWith: null as (() => void) | null,
      paused: false,
      rawHeaders: null as Buffer[] | null,
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
}

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
