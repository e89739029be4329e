import type { AttemptRecord } from './call.js';

/**
 * The body of a response: the usual helpers, or an async iterable of bytes to stream it (for
 * example into `stream.pipeline()`). It can be read once. Read it, or call `dump()`, so the
 * connection returns to the pool.
 */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  /** The whole body as UTF-8 text (a leading byte-order mark dropped). */
  text(): Promise<string>;
  /** The whole body parsed as JSON. */
  json(): Promise<unknown>;
  /** The whole body as bytes. */
  bytes(): Promise<Uint8Array>;
  /** The whole body as an `ArrayBuffer`. */
  arrayBuffer(): Promise<ArrayBuffer>;
  /** Reads and discards the body (up to 128 KiB, then closes the connection instead). */
  dump(): Promise<unknown>;
  /** Closes the body early, releasing (destroying) the connection. */
  destroy(error?: Error): unknown;
}

/** Response headers, lower-case names, as undici parses them. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/**
 * The answer to a call: the status and headers, the body still to be read (read it or `dump()` it:
 * the connection returns to the pool only then), and every attempt made.
 *
 * A final retryable status (a 503 with no retry left) is returned, not thrown; so are deterministic
 * statuses (400, 404, 422 …), after one attempt.
 */
export interface DependencyResponse {
  status: number;
  headers: ResponseHeaders;
  body: ResponseBody;
  attempts: readonly AttemptRecord[];
}

/** Reads and drops a response nobody will use, so its connection returns to the pool. */
export function discard(response: DependencyResponse): void {
  response.body.dump().catch(noop);
}

function noop(): void {}
