import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
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
  /** Buffers as written; a short ASCII string as it is (copied into the stored body at the end). */
  #chunks: (Buffer | string)[] | null = [];
  #size = 0;

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
    const chunks = this.#chunks;
    if (chunks === null) return null;
    if (chunks.length === 0) return EMPTY;
    if (chunks.length === 1 && typeof chunks[0] === 'string') return chunks[0];
    return exactCopy(chunks, this.#size);
  }

  /** The headers as written: names lower-case, those a replay does not repeat left out. Call once it finished. */
  headers(): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    // Names and values one by one rather than getHeaders(), which builds a dictionary-mode object
    // of them all; the names are lower-case already.
    const res = this.#res;
    const names = res.getHeaderNames();
    for (let i = 0; i < names.length; i++) putLower(headers, names[i]!, res.getHeader(names[i]!));
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
    const chunks = this.#chunks;
    if (chunks === null || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    // A Buffer is kept as it is (Node's own write holds it the same way); a short ASCII string in
    // UTF-8 (a JSON answer) is kept as it is, its bytes its characters; another string is encoded once.
    let piece: Buffer | string;
    if (typeof chunk === 'string') {
      const utf8 = typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8';
      piece =
        utf8 && isShortAscii(chunk)
          ? chunk
          : Buffer.from(chunk, utf8 ? 'utf8' : (encoding as BufferEncoding));
    } else piece = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    this.#size += piece.length;
    if (this.#size > this.#maxBytes) this.#chunks = null;
    else chunks.push(piece);
  }

  /** The owner to tell, once: null after the first `end`. @internal */
  ended(): CaptureOwner | null {
    const owner = this.#owner;
    this.#owner = null;
    return owner;
  }
}

function capturedWriteHead(this: Captured, ...args: unknown[]): unknown {
  const capture = this[CAPTURE]!;
  const headers = typeof args[1] === 'string' ? args[2] : args[1];
  for (let c: ResponseCapture | undefined = capture; c !== undefined; c = c.outer) c.headHeaders(headers);
  return capture.writeHead.apply(this, args);
}

function capturedWrite(this: Captured, ...args: unknown[]): unknown {
  const capture = this[CAPTURE]!;
  for (let c: ResponseCapture | undefined = capture; c !== undefined; c = c.outer) c.take(args[0], args[1]);
  return capture.write.apply(this, args);
}

function capturedEnd(this: Captured, ...args: unknown[]): unknown {
  const capture = this[CAPTURE]!;
  const owner = capture.ended();
  if (owner === null) return capture.end.apply(this, args);
  capture.take(args[0], args[1]);
  const outer = capture.outer === undefined ? null : endOuter(capture.outer, args);
  try {
    return capture.end.apply(this, args);
  } finally {
    if (outer !== null)
      for (let i = 0; i < outer.length; i += 2)
        (outer[i + 1] as CaptureOwner).onResponseEnd(outer[i] as ResponseCapture);
    owner.onResponseEnd(capture);
  }
}

/** The outer captures of a response that ends, with their owners: [capture, owner, …]. */
function endOuter(first: ResponseCapture, args: readonly unknown[]): (ResponseCapture | CaptureOwner)[] {
  const ended: (ResponseCapture | CaptureOwner)[] = [];
  for (let c: ResponseCapture | undefined = first; c !== undefined; c = c.outer) {
    const owner = c.ended();
    if (owner === null) continue;
    c.take(args[0], args[1]);
    ended.push(c, owner);
  }
  return ended;
}

/**
 * Records what the handler writes on `res` — status, headers, body up to `maxBytes` — by wrapping
 * `writeHead`, `write` and `end` on this one response (own properties over the prototype's). What
 * reaches the client is unchanged. `owner.onResponseEnd` is called once, when the handler ends the
 * response — whether or not the client is still there to receive it (a client that timed out and
 * left must still find the answer of the execution it caused when it asks again).
 */
export function captureResponse(res: ServerResponse, maxBytes: number, owner: CaptureOwner): ResponseCapture {
  const capture = new ResponseCapture(res, maxBytes, owner);
  const target = res as Captured;
  target[CAPTURE] = capture;
  const methods = res as unknown as Record<string, unknown>;
  methods.writeHead = capturedWriteHead;
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
  if (isNotReplayed(lower) || value === undefined || value === null) return;
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
    if (typeof chunk === 'string') {
      for (let i = 0; i < chunk.length; i++) out[at + i] = chunk.charCodeAt(i);
    } else out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** A string of ASCII characters as its bytes. */
function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Longest string kept as characters rather than encoded at once (checked character by character). */
const SHORT_STRING = 1024;

/** Whether `text` is short and ASCII only: its UTF-8 bytes are its character codes. */
function isShortAscii(text: string): boolean {
  if (text.length > SHORT_STRING) return false;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
