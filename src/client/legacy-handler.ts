import type { ResponseHeaders } from '../transport/response-body.js';

/**
 * undici's older handler callbacks: Node's bundled `fetch` on undici 6 and 7 dispatches these, and
 * so do undici 7's own `request()`, `stream()` … (wrapped by its `compose()` in a `WrapHandler`).
 */
export interface LegacyHandler {
  onConnect?(abort: (reason?: Error) => void, context: unknown): void;
  onResponseStarted?(): void;
  onHeaders?(
    statusCode: number,
    rawHeaders: Buffer[],
    resume: () => void,
    statusText: string,
  ): boolean | undefined;
  onData?(chunk: Buffer): boolean | undefined;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(error: Error): void;
  onUpgrade?(statusCode: number, rawHeaders: Buffer[], socket: unknown): void;
}

/**
 * What an adapted handler uses of undici's controller, or of the interceptor's: `rawHeaders`, the
 * response's header lines as the connection received them, where the controller keeps them (undici
 * 7 and 8 do, and so does the interceptor for a governed call).
 */
interface Controller {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
  readonly rawHeaders?: unknown;
}

/**
 * Whether `handler` must be adapted to undici's controller-based API: it speaks only the older one,
 * or it is undici 7's `WrapHandler` around such a handler (which `compose()` puts around every
 * handler of its own `request()`, `stream()` …). The wrapper's older methods reach the wrapped
 * handler unchanged, so adapted here it gets the headers as received, where the wrapper would write
 * the parsed headers back out for the handler to parse again.
 */
export function speaksOlderApi(handler: object): boolean {
  if (isLegacyHandler(handler)) return true;
  // Every request of one caller comes with a handler of the same class: the verdict on the last
  // class is kept, as reading a class's `name` costs more than the rest of this check.
  const type = (handler as { constructor?: unknown }).constructor;
  if (type === lastHandlerType) return lastVerdict;
  const older = handler as LegacyHandler;
  lastHandlerType = type;
  lastVerdict =
    (type as { name?: unknown } | undefined)?.name === 'WrapHandler' &&
    typeof older.onConnect === 'function' &&
    typeof older.onHeaders === 'function' &&
    typeof older.onData === 'function' &&
    typeof older.onComplete === 'function';
  return lastVerdict;
}

let lastHandlerType: unknown = null;
let lastVerdict = false;

/** Whether `handler` has none of undici's controller-based callbacks. */
export function isLegacyHandler(handler: object): boolean {
  return (
    typeof (handler as { onRequestStart?: unknown }).onRequestStart !== 'function' &&
    typeof (handler as { onResponseStart?: unknown }).onResponseStart !== 'function'
  );
}

/**
 * The one adapter of undici's older handler API, put around a caller's handler where it enters
 * prazo (the interceptor's `dispatch`): everything past it — the governed call, or the dispatcher
 * a request passes through to — sees undici's controller-based API (`onRequestStart`,
 * `onResponseStart`, `onResponseData`, `onResponseEnd`, `onResponseError`), the only one undici 8
 * has. Its older methods pass on unchanged, for an undici 6 dispatcher (Node's bundled one, created
 * by the global `fetch` before any newer copy loaded) that calls only those.
 */
export class LegacyHandlerAdapter {
  readonly #handler: LegacyHandler;

  constructor(handler: LegacyHandler) {
    this.#handler = handler;
  }

  // --- undici's controller-based API, adapted -------------------------------------------------

  onRequestStart(controller: Controller, context: unknown): void {
    // The reason as the handler gives it: a governed call, like undici, makes one if there is none.
    this.#handler.onConnect?.((reason) => controller.abort(reason as Error), context);
  }

  onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: ResponseHeaders,
    statusMessage?: string,
  ): void {
    const handler = this.#handler;
    handler.onResponseStarted?.();
    const more = handler.onHeaders?.(
      statusCode,
      headerLines(controller, headers),
      () => controller.resume(),
      statusMessage ?? '',
    );
    if (more === false) controller.pause();
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#handler.onData?.(chunk) === false) controller.pause();
  }

  onResponseEnd(_controller: Controller, trailers: ResponseHeaders | null | undefined): void {
    this.#handler.onComplete?.(trailers == null ? [] : rawHeaders(trailers));
  }

  onResponseError(_controller: Controller | null | undefined, error: Error): void {
    this.#handler.onError?.(error);
  }

  onRequestUpgrade(
    controller: Controller,
    statusCode: number,
    headers: ResponseHeaders,
    socket: unknown,
  ): void {
    this.#handler.onUpgrade?.(statusCode, headerLines(controller, headers), socket);
  }

  // --- the older API, passed on (an undici 6 dispatcher) ----------------------------------------

  onConnect(abort: (reason?: Error) => void, context: unknown): void {
    this.#handler.onConnect?.(abort, context);
  }

  onResponseStarted(): void {
    this.#handler.onResponseStarted?.();
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusText: string): boolean | undefined {
    return this.#handler.onHeaders?.(statusCode, raw, resume, statusText);
  }

  onData(chunk: Buffer): boolean | undefined {
    return this.#handler.onData?.(chunk);
  }

  onComplete(trailers: Buffer[] | null): void {
    this.#handler.onComplete?.(trailers);
  }

  onError(error: Error): void {
    this.#handler.onError?.(error);
  }

  onUpgrade(statusCode: number, raw: Buffer[], socket: unknown): void {
    this.#handler.onUpgrade?.(statusCode, raw, socket);
  }
}

/** The header lines as received, where the controller keeps them; else written out from `headers`. */
function headerLines(controller: Controller | null | undefined, headers: ResponseHeaders): Buffer[] {
  const raw = controller?.rawHeaders;
  return Array.isArray(raw) ? (raw as Buffer[]) : rawHeaders(headers ?? {});
}

/** Headers as the older handler API hands them: a flat list of buffers. */
function rawHeaders(headers: ResponseHeaders): Buffer[] {
  const raw: Buffer[] = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) raw.push(Buffer.from(name), Buffer.from(v, 'latin1'));
    else raw.push(Buffer.from(name), Buffer.from(value, 'latin1'));
  }
  return raw;
}
