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
