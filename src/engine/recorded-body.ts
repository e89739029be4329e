/**
 * The most bytes of a stream body a call keeps so that it can send the body again: 64 KiB. The
 * bodies Node's `fetch` hands to its dispatcher (a string, bytes, a `Blob`, form data, each turned
 * into a stream) are that size or smaller in the calls prazo governs; a larger upload is sent once.
 */
export const RECORDED_BODY_MAX_BYTES = 64 * 1024;

/**
 * A stream body that keeps a copy of what it sends, so that a retry or a hedge can send it again:
 * the first attempt reads the caller's stream as it would have, chunk by chunk, and each chunk is
 * copied aside; once the stream has ended within {@link RECORDED_BODY_MAX_BYTES}, the body is
 * {@link RecordedBody.bytes} and can be sent any number of times. A stream that runs longer stops
 * being recorded (its copy is dropped at once) and is sent once, as any stream is.
 *
 * Only idempotent calls (a safe method, `idempotent: true`, or an `Idempotency-Key`) wrap their
 * stream in one: a body nobody may resend is not worth a copy.
 */
export class RecordedBody implements AsyncIterable<Uint8Array> {
  /** The caller's stream, until an attempt starts reading it. */
  #source: AsyncIterable<Uint8Array | string> | null;
  /** The copies so far; null once the stream ran past the bound. */
  #chunks: Uint8Array[] | null = [];
  #size = 0;
  /** The whole body, once the stream has ended within the bound. */
  #bytes: Uint8Array | null = null;
  readonly #maxBytes: number;

  constructor(source: AsyncIterable<Uint8Array | string>, maxBytes = RECORDED_BODY_MAX_BYTES) {
    this.#source = source;
    this.#maxBytes = maxBytes;
  }

  /** The whole body once the first attempt has sent it within the bound; null before, or when it ran longer. */
  get bytes(): Uint8Array | null {
    return this.#bytes;
  }

  /**
   * The first reader gets the caller's stream, recorded on the way; a reader after it gets the
   * recorded bytes, or an error when there are none to give (the stream ran past the bound, or is
   * still being read): a call only sends a body again once {@link RecordedBody.bytes} holds it.
   */
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const bytes = this.#bytes;
    if (bytes !== null) return once(bytes);
    const source = this.#source;
    if (source === null)
      return failing(new Error('A stream body can be read once: it was not recorded whole.'));
    this.#source = null;
    return this.#record(source);
  }

  async *#record(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const chunks = this.#chunks;
      if (chunks !== null) {
        this.#size += data.byteLength;
        if (this.#size > this.#maxBytes) this.#chunks = null;
        // A copy: the caller's stream may hand out a buffer it writes into again.
        else chunks.push(new Uint8Array(data));
      }
      yield data;
    }
    const chunks = this.#chunks;
    this.#chunks = null;
    if (chunks !== null) this.#bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
  }
}

function once(bytes: Uint8Array): AsyncIterator<Uint8Array> {
  let sent = false;
  return {
    next: () => {
      if (sent) return Promise.resolve({ done: true, value: undefined });
      sent = true;
      return Promise.resolve({ done: false, value: bytes });
    },
  };
}

function failing(error: Error): AsyncIterator<Uint8Array> {
  return { next: () => Promise.reject(error) };
}
