import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { StoredResponse } from './idempotency-store.js';

/** Headers a replay does not repeat: hop-by-hop, and those that describe one transmission. */
const NOT_REPLAYED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'server-timing',
  'upgrade',
  'trailer',
]);

const EMPTY = new Uint8Array(0);

/** What a response being captured has written so far. */
export interface ResponseCapture {
  /** The response as written, or null when its body went over the bound. Call once it finished. */
  stored(): StoredResponse | null;
}

/**
 * Records what the handler writes on `res` — status, headers, body up to `maxBytes` — by wrapping
 * `writeHead`, `write` and `end` on this one response (own properties over the prototype's). What
 * reaches the client is unchanged. `onEnd` is called once, when the handler ends the response —
 * whether or not the client is still there to receive it (a client that timed out and left must
 * still find the answer of the execution it caused when it asks again).
 */
export function captureResponse(res: ServerResponse, maxBytes: number, onEnd: () => void): ResponseCapture {
  let ended = false;
  let headHeaders: OutgoingHttpHeaders | readonly unknown[] | undefined;
  let chunks: Buffer[] | null = [];
  let size = 0;
  const take = (chunk: unknown, encoding: unknown): void => {
    if (chunks === null || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    // A Buffer is kept as it is (Node's own write holds it the same way); a string is encoded once.
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > maxBytes) chunks = null;
    else chunks.push(bytes);
  };
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  const target = res as unknown as Record<string, unknown>;
  target.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = typeof rest[0] === 'string' ? rest[1] : rest[0];
    if (typeof headers === 'object' && headers !== null) headHeaders = headers as OutgoingHttpHeaders;
    return (writeHead as (...args: unknown[]) => unknown).call(this, status, ...rest);
  };
  target.write = function (this: ServerResponse, chunk: unknown, encoding?: unknown, ...rest: unknown[]) {
    take(chunk, encoding);
    return (write as (...args: unknown[]) => unknown).call(this, chunk, encoding, ...rest);
  };
  target.end = function (this: ServerResponse, chunk?: unknown, encoding?: unknown, ...rest: unknown[]) {
    if (ended) return (end as (...args: unknown[]) => unknown).call(this, chunk, encoding, ...rest);
    ended = true;
    take(chunk, encoding);
    try {
      return (end as (...args: unknown[]) => unknown).call(this, chunk, encoding, ...rest);
    } finally {
      onEnd();
    }
  };
  return {
    stored() {
      if (chunks === null) return null;
      const headers: Record<string, string | string[]> = {};
      addHeaders(headers, res.getHeaders());
      if (headHeaders !== undefined) addHeaders(headers, headHeaders);
      return {
        status: res.statusCode,
        headers,
        body: chunks.length === 0 ? EMPTY : exactCopy(chunks, size),
      };
    },
  };
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
  const lower = name.toLowerCase();
  if (NOT_REPLAYED.has(lower) || value === undefined || value === null) return;
  into[lower] = Array.isArray(value) ? value.map(String) : String(value);
}

/**
 * The chunks in one buffer of their own: a small Buffer is often a view on a shared 8 KiB pool slab,
 * which a stored record would otherwise keep alive (and `maxBytes` would not count).
 */
function exactCopy(chunks: readonly Buffer[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
