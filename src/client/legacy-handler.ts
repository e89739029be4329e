import type { ResponseHeaders } from '../transport/response-body.js';

/** undici's older handler callbacks (Node's bundled `fetch` on undici 6 and 7 dispatches these). */
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

/** What an adapted handler uses of undici's controller. */
interface Controller {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

/** Whether `handler` speaks only undici's older API. */
export function isLegacyHandler(handler: object): boolean {
  return (
    typeof (handler as { onRequestStart?: unknown }).onRequestStart !== 'function' &&
    typeof (handler as { onResponseStart?: unknown }).onResponseStart !== 'function'
  );
}

/**
 * An older-style handler that a dispatcher of any undici can take: undici 7 and 8 call its
 * controller-based methods, adapted here to the older callbacks; undici 6 calls the older callbacks,
 * passed on as they are. The interceptor wraps a handler in it only when passing a request through
 * (Node's bundled `fetch` on undici 6 dispatching to an undici 8 Agent, which takes only the newer API).
 */
export class BilingualHandler {
  readonly #handler: LegacyHandler;

  constructor(handler: LegacyHandler) {
    this.#handler = handler;
  }

  // --- undici 7 and 8 ---
  onRequestStart(controller: Controller, context: unknown): void {
    this.#handler.onConnect?.((reason) => controller.abort(reason ?? new Error('aborted')), context);
  }

  onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: ResponseHeaders,
    statusMessage?: string,
  ): void {
    this.#handler.onResponseStarted?.();
    const more = this.#handler.onHeaders?.(
      statusCode,
      rawHeaders(headers),
      () => controller.resume(),
      statusMessage ?? '',
    );
    if (more === false) controller.pause();
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#handler.onData?.(chunk) === false) controller.pause();
  }

  onResponseEnd(_controller: Controller, trailers: ResponseHeaders): void {
    this.#handler.onComplete?.(rawHeaders(trailers ?? {}));
  }

  onResponseError(_controller: Controller | null | undefined, error: Error): void {
    this.#handler.onError?.(error);
  }

  onRequestUpgrade(
    _controller: Controller,
    statusCode: number,
    headers: ResponseHeaders,
    socket: unknown,
  ): void {
    this.#handler.onUpgrade?.(statusCode, rawHeaders(headers), socket);
  }

  // --- undici 6 ---
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

/** Headers as the older handler API hands them: a flat list of buffers. */
export function rawHeaders(headers: ResponseHeaders): Buffer[] {
  const raw: Buffer[] = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) raw.push(Buffer.from(name), Buffer.from(v, 'latin1'));
    else raw.push(Buffer.from(name), Buffer.from(value, 'latin1'));
  }
  return raw;
}
