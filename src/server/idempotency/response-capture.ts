import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setsHeaderAtWriteHead } from '../deadline-scope.js';
import { isAscii, writeAscii } from './ascii.js';
import type { StoredResponse } from './idempotency-store.js';

/** Headers a replay does not repeat: hop-by-hop, and those that describe one transmission. */
function isNotReplayed(name: string): boolean {
  switch (name) {
    case 'connection':
    case 'keep-alive':
    case 'transfer-encoding':
    case 'content-length':
    case 'date':
    case 'server-timing':
    case 'upgrade':
    case 'trailer':
      return true;
    default:
      return false;
  }
}

const EMPTY = new Uint8Array(0);

/** Where a captured response is reached from the wrappers (own properties of that one response). */
const CAPTURE = Symbol('prazo.idempotency.capture');

type Method = (...args: unknown[]) => unknown;
type Captured = ServerResponse & { [CAPTURE]?: ResponseCapture };

/** Told once when the handler ends the response being captured. */
export interface CaptureOwner {
  onResponseEnd(capture: ResponseCapture): void;
}

/**
 * What a response being captured has written so far: status, headers and body up to `maxBytes`.
 *
 * One object per response, and the same three module-level wrappers on every response: no closure
 * is made per request. The wrappers reach the capture through a symbol on the response, and the
 * capture tells its owner (an object) when the handler ends it.
 */
export class ResponseCapture {
  readonly #res: ServerResponse;
  readonly #maxBytes: number;
  #owner: CaptureOwner | null;
  /** A capture already on the response (two layers on one request): told and fed first. @internal */
  readonly outer: ResponseCapture | undefined;
  readonly writeHead: Method;
  readonly write: Method;
  readonly end: Method;
  #headHeaders: OutgoingHttpHeaders | readonly unknown[] | undefined = undefined;
  /**
   * The chunks as written — Buffers as they are, a short ASCII string as it is (copied into the stored
   * body at the end) —: the first alone (most handlers write one), all of them once there is a second.
   */
  #first: Buffer | string | undefined = undefined;
  #chunks: (Buffer | string)[] | undefined = undefined;
  #size = 0;
  /** The body went over the bound: nothing is kept. */
  #over = false;

  constructor(res: ServerResponse, maxBytes: number, owner: CaptureOwner) {
    this.#res = res;
    this.#maxBytes = maxBytes;
    this.#owner = owner;
    // A second layer on the same response shares the wrappers: the originals are the first's, and
    // the wrappers feed every capture on the response, outermost first.
    const outer = (res as Captured)[CAPTURE];
    this.outer = outer;
    this.writeHead = outer?.writeHead ?? (res.writeHead as Method);
    this.write = outer?.write ?? (res.write as Method);
    this.end = outer?.end ?? (res.end as Method);
  }

  /** The response as written, or null when its body went over the bound. Call once it finished. */
  stored(): StoredResponse | null {
    const body = this.body();
    if (body === null) return null;
    return {
      status: this.#res.statusCode,
      headers: this.headers(),
      body: typeof body === 'string' ? asciiBytes(body) : body,
    };
  }

  /**
   * The body as written, or null when it went over the bound: the handler's own string when it wrote
   * one short ASCII string (its bytes its characters), else the bytes in a buffer of their own.
   * Call once it finished.
   */
  body(): Uint8Array | string | null {
    if (this.#over) return null;
    const first = this.#first;
    if (first === undefined) return EMPTY;
    const chunks = this.#chunks;
    if (chunks === undefined && typeof first === 'string') return first;
    return exactCopy(chunks ?? [first], this.#size);
  }

  /** The headers as written: names lower-case, those a replay does not repeat left out. Call once it finished. */
  headers(): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    // Names and values one by one rather than getHeaders(), which builds a dictionary-mode object
    // of them all; the names are lower-case already.
    // A name a replay leaves out (server-timing, content-length …) is not read at all.
    const res = this.#res;
    const names = res.getHeaderNames();
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (!isNotReplayed(name)) putValue(headers, name, res.getHeader(name));
    }
    // Headers given to writeHead are among the response's own once any header was set on it (Node
    // then sets each of them); on a response without any, Node sends them as given.
    const head = this.#headHeaders;
    if (head !== undefined && names.length === 0) addHeaders(headers, head);
    return headers;
  }

  /** @internal */
  headHeaders(headers: unknown): void {
    if (typeof headers === 'object' && headers !== null) this.#headHeaders = headers as OutgoingHttpHeaders;
  }

  /** @internal */
  take(chunk: unknown, encoding: unknown): void {
    if (this.#over || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    // A Buffer is kept as it is (Node's own write holds it the same way); a short ASCII string in
    // UTF-8 (a JSON answer) is kept as it is, its bytes its characters; another string is encoded once.
    let piece: Buffer | string;
    if (typeof chunk === 'string') {
      const utf8 = typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8';
      piece =
        utf8 && chunk.length <= SHORT_STRING && isAscii(chunk)
          ? chunk
          : Buffer.from(chunk, utf8 ? 'utf8' : (encoding as BufferEncoding));
    } else piece = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    this.#size += piece.length;
    if (this.#size > this.#maxBytes) {
      this.#over = true;
      this.#first = undefined;
      this.#chunks = undefined;
    } else if (this.#first === undefined) this.#first = piece;
    else if (this.#chunks === undefined) this.#chunks = [this.#first, piece];
    else this.#chunks.push(piece);
  }

  /** The owner to tell, once: null after the first `end`. @internal */
  ended(): CaptureOwner | null {
    const owner = this.#owner;
    this.#owner = null;
    return owner;
  }
}

// The wrappers pass on exactly the arguments they were given (their count too: a method below may
// look at it), with `call` for up to three — the usual calls (`writeHead(status, headers)`,
// `end(body)`) — rather than a rest array and `apply` on every response.

function capturedWriteHead(this: Captured, a?: unknown, b?: unknown, c?: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: their count is passed on as it was (see above)
  const given = arguments;
  const capture = this[CAPTURE]!;
  const headers = typeof b === 'string' ? c : b;
  for (let k: ResponseCapture | undefined = capture; k !== undefined; k = k.outer) k.headHeaders(headers);
  return forward(this, capture.writeHead, given, a, b, c);
}

function capturedWrite(this: Captured, a?: unknown, b?: unknown, c?: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: their count is passed on as it was (see above)
  const given = arguments;
  const capture = this[CAPTURE]!;
  for (let k: ResponseCapture | undefined = capture; k !== undefined; k = k.outer) k.take(a, b);
  return forward(this, capture.write, given, a, b, c);
}

function capturedEnd(this: Captured, a?: unknown, b?: unknown, c?: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: their count is passed on as it was (see above)
  const given = arguments;
  const capture = this[CAPTURE]!;
  const owner = capture.ended();
  if (owner === null) return forward(this, capture.end, given, a, b, c);
  capture.take(a, b);
  const outer = capture.outer === undefined ? null : endOuter(capture.outer, a, b);
  try {
    return forward(this, capture.end, given, a, b, c);
  } finally {
    if (outer !== null)
      for (let i = 0; i < outer.length; i += 2)
        (outer[i + 1] as CaptureOwner).onResponseEnd(outer[i] as ResponseCapture);
    owner.onResponseEnd(capture);
  }
}

/** Calls `method` on `res` with a wrapper's arguments (`given`, its first three `a`, `b`, `c`). */
function forward(
  res: ServerResponse,
  method: Method,
  given: IArguments,
  a: unknown,
  b: unknown,
  c: unknown,
): unknown {
  switch (given.length) {
    case 0:
      return method.call(res);
    case 1:
      return method.call(res, a);
    case 2:
      return method.call(res, a, b);
    case 3:
      return method.call(res, a, b, c);
    default:
      return method.apply(res, Array.prototype.slice.call(given) as unknown[]);
  }
}

/** The outer captures of a response that ends, with their owners: [capture, owner, …]. */
function endOuter(
  first: ResponseCapture,
  chunk: unknown,
  encoding: unknown,
): (ResponseCapture | CaptureOwner)[] {
  const ended: (ResponseCapture | CaptureOwner)[] = [];
  for (let c: ResponseCapture | undefined = first; c !== undefined; c = c.outer) {
    const owner = c.ended();
    if (owner === null) continue;
    c.take(chunk, encoding);
    ended.push(c, owner);
  }
  return ended;
}

/**
 * Records what the handler writes on `res` — status, headers, body up to `maxBytes` — by wrapping
 * `write`, `end` and, where needed, `writeHead` on this one response (own properties over the
 * prototype's; `writeHead` is left alone under prazo's adapters with Server-Timing on). What
 * reaches the client is unchanged. `owner.onResponseEnd` is called once, when the handler ends the
 * response — whether or not the client is still there to receive it (a client that timed out and
 * left must still find the answer of the execution it caused when it asks again).
 */
export function captureResponse(res: ServerResponse, maxBytes: number, owner: CaptureOwner): ResponseCapture {
  const capture = new ResponseCapture(res, maxBytes, owner);
  const target = res as Captured;
  target[CAPTURE] = capture;
  const methods = res as unknown as Record<string, unknown>;
  // The headers given to writeHead are needed only when none is set on the response before Node's
  // writeHead runs; prazo's adapters set Server-Timing there (unless `serverTiming: 'none'`), and
  // the response's own headers then hold them: no wrapper.
  if (!setsHeaderAtWriteHead(res)) methods.writeHead = capturedWriteHead;
  methods.write = capturedWrite;
  methods.end = capturedEnd;
  return capture;
}

function addHeaders(
  into: Record<string, string | string[]>,
  from: OutgoingHttpHeaders | readonly unknown[],
): void {
  if (Array.isArray(from)) {
    // writeHead(status, [name, value, name, value …]) or [[name, value] …]
    if (from.length > 0 && Array.isArray(from[0])) {
      for (const pair of from as unknown[][]) put(into, String(pair[0]), pair[1]);
    } else {
      for (let i = 0; i + 1 < from.length; i += 2) put(into, String(from[i]), from[i + 1]);
    }
    return;
  }
  for (const name of Object.keys(from)) put(into, name, (from as OutgoingHttpHeaders)[name]);
}

function put(into: Record<string, string | string[]>, name: string, value: unknown): void {
  putLower(into, name.toLowerCase(), value);
}

function putLower(into: Record<string, string | string[]>, lower: string, value: unknown): void {
  if (!isNotReplayed(lower)) putValue(into, lower, value);
}

/** Puts a header that a replay repeats (`lower` is not among those it leaves out). */
function putValue(into: Record<string, string | string[]>, lower: string, value: unknown): void {
  if (value === undefined || value === null) return;
  into[lower] = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value : String(value);
}

/**
 * The chunks in one buffer of their own: a small Buffer is often a view on a shared 8 KiB pool slab,
 * which a stored record would otherwise keep alive (and `maxBytes` would not count).
 */
function exactCopy(chunks: readonly (Buffer | string)[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    if (typeof chunk === 'string') writeAscii(out, chunk, at);
    else out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** A string of ASCII characters as its bytes. */
function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  writeAscii(out, text, 0);
  return out;
}

/** Longest string kept as characters rather than encoded at once (then checked for ASCII). */
const SHORT_STRING = 1024;
