import { EventEmitter } from 'node:events';
import type { IncomingMessage as NodeIncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import type { LegacyHandler } from '../legacy-handler.js';
import { http } from './node-modules.js';
import type { GovernedOrigin, GovernedTarget, ModuleProtocol } from './route.js';

const { IncomingMessage, STATUS_CODES } = http;

/** The dispatcher a governed request is handed to: the one `install()` composed prazo onto. */
export interface GovernedDispatcher {
  dispatch(options: object, handler: object): boolean;
}

/**
 * What `http.request()` returns for a governed origin: a writable request with `ClientRequest`'s
 * surface (headers, `setTimeout`, `abort`, `destroy`, the `socket`, `response`, `timeout`, `close`
 * and `error` events), whose body is kept until `end()` and then sent as one prazo call through the
 * dispatcher — deadline, pre-call check, timeouts, budgeted retries, hedging, the choice of instance.
 * The answer arrives as an `http.IncomingMessage` that streams the body with backpressure.
 *
 * What it does not have: an own TCP socket (`socket` is a stand-in — the connection is the
 * dispatcher pool's), `information` (1xx) events, trailers.
 */
export class GovernedRequest extends Writable {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly protocol: ModuleProtocol;
  /** The response, once it started. */
  res: NodeIncomingMessage | null = null;
  aborted = false;
  reusedSocket = false;
  maxHeadersCount: number | null = null;
  /** Set once the request went to the dispatcher: headers can no longer change. */
  headersSent = false;
  timings?: unknown;

  readonly #target: GovernedTarget;
  readonly #dispatcher: GovernedDispatcher;
  /** The caller's headers, until a header method needs them by name (then {@link #named}). */
  #named: Map<string, [string, unknown]> | null = null;
  #chunks: Buffer[] | null = null;
  #socket: StandInSocket | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** The call's abort, once dispatched. */
  #cancel: ((reason?: Error) => void) | null = null;
  #resume: (() => void) | null = null;
  /** The call has answered in full, or failed: nothing more to cancel. */
  #settled = false;
  #signalListener: (() => void) | null = null;

  constructor(target: GovernedTarget, protocol: ModuleProtocol, dispatcher: GovernedDispatcher) {
    super({ autoDestroy: false });
    this.#target = target;
    this.#dispatcher = dispatcher;
    this.method = target.method;
    this.path = target.path;
    this.protocol = protocol;
    this.host = target.origin.hostname;
    if (target.callback !== undefined) this.once('response', target.callback);
    if (target.timeoutMs !== undefined) this.setTimeout(target.timeoutMs);
    const signal = target.signal;
    if (signal !== undefined) {
      if (signal.aborted) process.nextTick(() => this.destroy(abortError(signal.reason)));
      else {
        this.#signalListener = () => this.destroy(abortError(signal.reason));
        signal.addEventListener('abort', this.#signalListener, { once: true });
      }
    }
    // Node assigns a socket on a later tick: listeners attached after request() returns hear it.
    process.nextTick(announceSocket, this);
  }

  /** A stand-in: the connection is the dispatcher's (see {@link StandInSocket}). */
  get socket(): StandInSocket {
    if (this.#socket === null) this.#socket = new StandInSocket(this, this.#target.origin);
    return this.#socket;
  }

  get connection(): StandInSocket {
    return this.socket;
  }

  // --- headers (ClientRequest's methods) -------------------------------------------------------

  setHeader(name: string, value: unknown): this {
    if (this.headersSent) throw headersSentError('set');
    this.#headers().set(name.toLowerCase(), [name, value]);
    return this;
  }

  getHeader(name: string): unknown {
    const entry = this.#headers().get(name.toLowerCase());
    if (entry !== undefined) return entry[1];
    return name.toLowerCase() === 'host' ? this.#target.origin.host : undefined;
  }

  hasHeader(name: string): boolean {
    return this.#headers().has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    if (this.headersSent) throw headersSentError('remove');
    this.#headers().delete(name.toLowerCase());
  }

  getHeaders(): Record<string, unknown> {
    const out: Record<string, unknown> = Object.create(null);
    for (const [lower, [, value]] of this.#headers()) out[lower] = value;
    return out;
  }

  getHeaderNames(): string[] {
    return [...this.#headers().keys()];
  }

  getRawHeaderNames(): string[] {
    return Array.from(this.#headers().values(), ([name]) => name);
  }

  flushHeaders(): void {}

  setNoDelay(): void {}

  setSocketKeepAlive(): void {}

  /**
   * Emits `timeout` once the request has been idle `ms` (no answer, no chunk of it) — as Node's
   * socket timeout does; it does not end the request (prazo's own timeouts do).
   */
  setTimeout(ms: number, callback?: () => void): this {
    if (callback !== undefined) this.once('timeout', callback);
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (ms > 0 && !this.#settled) {
      this.#timer = setTimeout(() => {
        this.#socket?.emit('timeout');
        this.emit('timeout');
      }, ms);
      this.#timer.unref();
    }
    return this;
  }

  /** @deprecated as in Node: use `destroy()`. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    process.nextTick(() => this.emit('abort'));
    this.destroy();
  }

  // --- the body --------------------------------------------------------------------------------

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.#chunks === null) this.#chunks = [chunk];
    else this.#chunks.push(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    callback();
    if (this.destroyed) return;
    this.#send();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#settled) {
      this.#settled = true;
      const reason = error ?? abortError(undefined);
      this.#cancel?.(reason);
      this.#cancel = null;
      const res = this.res;
      if (res !== null && !res.complete) res.destroy(reason);
    }
    this.#release();
    callback(error);
  }

  // --- the call --------------------------------------------------------------------------------

  #send(): void {
    this.headersSent = true;
    const chunks = this.#chunks;
    this.#chunks = null;
    const body = chunks === null ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const target = this.#target;
    let headers: Record<string, unknown> | null = target.headers;
    if (this.#named !== null || target.auth !== null) {
      const named = this.#headers();
      if (target.auth !== null && !named.has('authorization'))
        named.set('authorization', ['Authorization', `Basic ${Buffer.from(target.auth).toString('base64')}`]);
      headers = {};
      for (const [name, value] of named.values()) headers[name] = value;
    }
    try {
      this.#dispatcher.dispatch(
        { origin: target.origin.origin, path: target.path, method: target.method, headers, body },
        new ResponseHandler(this),
      );
    } catch (error) {
      this.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** @internal the dispatcher took the call. */
  started(cancel: (reason?: Error) => void): void {
    if (this.#settled) cancel(abortError(undefined));
    else this.#cancel = cancel;
  }

  /** @internal the answer's status line and headers. */
  respond(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (this.#settled) return false;
    this.#resume = resume;
    this.#touch();
    const res = new GovernedResponse(this.socket, this);
    res.statusCode = statusCode;
    res.statusMessage = statusText || STATUS_CODES[statusCode] || '';
    res.httpVersion = '1.1';
    res.httpVersionMajor = 1;
    res.httpVersionMinor = 1;
    const raw: string[] = new Array(rawHeaders.length);
    for (let i = 0; i < rawHeaders.length; i++) raw[i] = rawHeaders[i]!.toString('latin1');
    (res as unknown as { _addHeaderLines(h: string[], n: number): void })._addHeaderLines(raw, raw.length);
    (res as unknown as { req: GovernedRequest }).req = this;
    this.res = res;
    // As Node does: an answer nobody listens for is read and dropped.
    if (!this.emit('response', res)) res.resume();
    return true;
  }

  /** @internal one chunk of the answer's body; false pauses the call. */
  data(chunk: Buffer): boolean {
    const res = this.res;
    if (res === null || this.#settled) return false;
    this.#touch();
    return res.push(chunk);
  }

  /** @internal the answer is complete. */
  complete(): void {
    const res = this.res;
    if (res === null || this.#settled) return;
    this.#settled = true;
    this.#cancel = null;
    this.#release();
    res.complete = true;
    res.once('end', () => this.destroy());
    res.push(null);
  }

  /** @internal the call failed: before the answer, the request hears it; after, the answer does. */
  fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancel = null;
    this.#release();
    const res = this.res;
    if (res === null) {
      this.destroy(error);
      return;
    }
    res.destroy(error);
    this.destroy();
  }

  /** @internal the caller read on: let the call's body flow again. */
  readMore(): void {
    const resume = this.#resume;
    if (resume !== null && !this.#settled) resume();
  }

  /** @internal the caller destroyed the answer before its end. */
  cancelFromResponse(reason: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancel?.(reason);
    this.#cancel = null;
    this.#release();
    this.destroy();
  }

  #touch(): void {
    if (this.#timer !== null) this.#timer.refresh();
  }

  #release(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const listener = this.#signalListener;
    if (listener !== null) {
      this.#signalListener = null;
      this.#target.signal?.removeEventListener('abort', listener);
    }
  }

  #headers(): Map<string, [string, unknown]> {
    let named = this.#named;
    if (named === null) {
      named = new Map();
      const given = this.#target.headers;
      if (given !== null)
        for (const name in given)
          if (Object.hasOwn(given, name) && given[name] !== undefined)
            named.set(name.toLowerCase(), [name, given[name]]);
      this.#named = named;
    }
    return named;
  }
}

function announceSocket(request: GovernedRequest): void {
  if (!request.destroyed && request.listenerCount('socket') > 0) request.emit('socket', request.socket);
}

/**
 * The answer of a governed request: a real `http.IncomingMessage` (headers parsed by Node from the
 * raw lines, `complete`, `aborted`), fed by the call; reading on resumes the call, destroying it
 * early cancels the call.
 */
class GovernedResponse extends IncomingMessage {
  readonly #request: GovernedRequest;

  constructor(socket: StandInSocket, request: GovernedRequest) {
    super(socket as unknown as ConstructorParameters<typeof IncomingMessage>[0]);
    this.#request = request;
  }

  override _read(): void {
    this.#request.readMore();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.complete) {
      this.aborted = true;
      this.emit('aborted');
      this.#request.cancelFromResponse(error ?? abortError(undefined));
    }
    // As Node's answer does: an error nobody listens for ends the answer without being thrown.
    callback(this.listenerCount('error') === 0 ? null : error);
  }
}

/**
 * What a governed request offers as its `socket`: the connection is the dispatcher's, so this only
 * answers what callers ask of a socket (`setKeepAlive`, `remoteAddress` …) without acting;
 * `setTimeout()` arms the request's idle timer, `destroy()` destroys the request. It reads as connected and writable, not encrypted for
 * `http:`.
 */
export class StandInSocket extends EventEmitter {
  readonly connecting = false;
  readonly writable = true;
  readonly readable = false;
  readonly encrypted: boolean;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly #request: GovernedRequest;

  constructor(request: GovernedRequest, origin: GovernedOrigin) {
    super();
    this.#request = request;
    this.encrypted = request.protocol === 'https:';
    this.remoteAddress = origin.hostname;
    this.remotePort = origin.port;
  }

  get destroyed(): boolean {
    return this.#request.destroyed;
  }

  /** The request's idle timer: `timeout` is emitted here and on the request. */
  setTimeout(ms: number, callback?: () => void): this {
    if (callback !== undefined) this.once('timeout', callback);
    this.#request.setTimeout(ms);
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  address(): object {
    return {};
  }

  destroy(error?: Error): this {
    this.#request.destroy(error);
    return this;
  }
}

/** undici's older handler callbacks, answered by the governed request (raw header lines included). */
class ResponseHandler implements LegacyHandler {
  readonly #request: GovernedRequest;

  constructor(request: GovernedRequest) {
    this.#request = request;
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#request.started(abort);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    return this.#request.respond(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean {
    return this.#request.data(chunk);
  }

  onComplete(): void {
    this.#request.complete();
  }

  onError(error: Error): void {
    this.#request.fail(error);
  }
}

function abortError(cause: unknown): Error {
  const error = new Error('The operation was aborted', cause === undefined ? undefined : { cause });
  error.name = 'AbortError';
  (error as Error & { code: string }).code = 'ABORT_ERR';
  return error;
}

function headersSentError(verb: string): Error {
  const error = new Error(`Cannot ${verb} headers after they are sent to the client`);
  (error as Error & { code: string }).code = 'ERR_HTTP_HEADERS_SENT';
  return error;
}
