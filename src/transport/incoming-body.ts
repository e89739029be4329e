import { Readable } from 'node:stream';
import type { CoarseTimer, TimerEntry } from '../coarse-timer.js';
import { BodyDestroyedError } from '../errors.js';
import type { ResponseBody } from './response-body.js';

/** Bytes an unread body buffers before the connection stops reading (undici's default high-water mark). */
export const UNREAD_LIMIT_BYTES = 64 * 1024;

/** Bytes `dump()` reads and drops; a longer body is cut and its connection closed instead. */
export const DUMP_LIMIT_BYTES = 128 * 1024;

/** What an {@link IncomingBody} needs from the exchange that feeds it. */
/** A timer entry that lives as long as a body is open (see {@link IncomingBody.watch}). */
export interface BodyWatch extends TimerEntry {
  /** Called once when the body ends or fails (it has left the timer), or at once if it already had. */
  unwatched?(): void;
}

export interface BodySource {
  /** Resumes reading from the connection after a `push()` returned false. */
  resume(): void;
  /** Stops the response: the connection is closed and the body fails with `reason`. */
  stop(reason: Error): void;
}

/** Where {@link IncomingBody.pipe} hands the body: the undici interceptor's way back to its caller. */
export interface BodySink {
  /** A chunk; false pauses the connection until the body's `unpause()` is called. */
  data(chunk: Buffer): boolean;
  end(): void;
  error(error: Error): void;
}

// What the caller does with the body, what the response did, and what a whole read returns.
const UNREAD = 0;
const CONSUMING = 1;
const STREAMING = 2;
const DUMPING = 3;
const PIPING = 4;
const OPEN = 0;
const ENDED = 1;
const FAILED = 2;
const TEXT = 0;
const JSON_VALUE = 1;
const BYTES = 2;
const ARRAY_BUFFER = 3;

/**
 * A response body fed by the transport chunk by chunk. It is a plain object until someone streams
 * it: `text()`, `json()`, `bytes()`, `arrayBuffer()` and `dump()` collect (or drop) the chunks
 * directly, and only async iteration creates a `Readable`. A `Readable` per response costs
 * microseconds to build and to drive, most calls read small bodies whole, and most bodies have
 * arrived entirely by the time the caller asks for them.
 *
 * Backpressure: an unread body buffers up to {@link UNREAD_LIMIT_BYTES}, then the connection stops
 * reading until the body is consumed; a streamed body follows its `Readable`'s demand.
 */
export class IncomingBody implements ResponseBody {
  /**
   * The response's headers as the connection received them (`[name, value, …]`), when the transport
   * had them: the interceptor hands them to a handler of undici's older API as they are, instead of
   * writing the parsed headers back out.
   * @internal
   */
  rawHeaders: readonly Buffer[] | null = null;
  /**
   * The reason phrase of the status line (`OK`, or the dependency's own), when the transport had
   * it: `fetch` hands it on as `statusText`, the interceptor as the status message.
   * @internal
   */
  statusMessage = '';
  #source: BodySource;
  // The chunks held until read: none, one (most bodies arrive in one), or several — an array only
  // from the second chunk on (an array's first push allocates room for 17).
  #first: Buffer | null = null;
  #more: Buffer[] | null = null;
  #bytes = 0;
  #state = OPEN;
  #error: Error | null = null;
  #mode = UNREAD;
  #used = false;
  #paused = false;
  #want = TEXT;
  #resolve: ((value: unknown) => void) | null = null;
  #reject: ((error: unknown) => void) | null = null;
  #stream: Readable | null = null;
  #sink: BodySink | null = null;
  #timer: CoarseTimer | null = null;
  #entry: BodyWatch | null = null;

  constructor(source: BodySource) {
    this.#source = source;
  }

  /** Whether the body is still arriving (it has neither ended nor failed). */
  get open(): boolean {
    return this.#state === OPEN;
  }

  /** Whether the body was read, streamed or dumped (it can be only once). */
  get bodyUsed(): boolean {
    return this.#used;
  }

  /**
   * Keeps `entry` on `timer` while the body is open: it leaves the timer as soon as the body ends or
   * fails, without a listener.
   */
  watch(timer: CoarseTimer, entry: BodyWatch): void {
    if (this.#state !== OPEN) {
      entry.unwatched?.();
      return;
    }

    this.#timer = timer;
    this.#entry = entry;
    timer.add(entry);
  }

  // --- fed by the transport -------------------------------------------------------------------

  /** A chunk arrived; false asks the connection to pause until {@link BodySource.resume}. */
  push(chunk: Buffer): boolean {
    switch (this.#mode) {
      case STREAMING: {
        const more = this.#stream!.push(chunk);
        if (!more) this.#paused = true;
        return more;
      }
      case PIPING: {
        const more = this.#sink!.data(chunk);
        if (!more) this.#paused = true;
        return more;
      }
      case DUMPING:
        this.#bytes += chunk.length;
        if (this.#bytes > DUMP_LIMIT_BYTES) {
          this.#source.stop(new BodyDestroyedError('Body longer than the dump limit: connection closed.'));
          return false;
        }
        return true;
      default:
        if (this.#first === null) this.#first = chunk;
        else if (this.#more === null) this.#more = [chunk];
        else this.#more.push(chunk);
        this.#bytes += chunk.length;
        if (this.#mode === UNREAD && this.#bytes >= UNREAD_LIMIT_BYTES) {
          this.#paused = true;
          return false;
        }
        return true;
    }
  }

  /** The body arrived entirely. */
  end(): void {
    if (this.#state !== OPEN) return;
    this.#state = ENDED;
    this.#unwatch();
    if (this.#mode === STREAMING) this.#stream!.push(null);
    else if (this.#mode === PIPING) this.#sink!.end();
    else if (this.#mode === CONSUMING) this.#settle();
    else if (this.#mode === DUMPING) this.#finish(null);
  }

  /** The response failed (connection lost, aborted, timed out). */
  fail(error: Error): void {
    if (this.#state !== OPEN) return;
    this.#state = FAILED;
    this.#error = error;
    this.#drop();
    this.#unwatch();
    if (this.#mode === STREAMING) this.#stream!.destroy(error);
    else if (this.#mode === PIPING) this.#sink!.error(error);
    else if (this.#mode === CONSUMING) this.#fail(error);
    else if (this.#mode === DUMPING) this.#finish(null);
  }

  // --- read by the caller ---------------------------------------------------------------------

  /** The whole body as UTF-8 text (a leading byte-order mark is dropped). */
  text(): Promise<string> {
    return this.#consume(TEXT) as Promise<string>;
  }

  /** The whole body parsed as JSON. */
  json(): Promise<unknown> {
    return this.#consume(JSON_VALUE);
  }

  /** The whole body as bytes. */
  bytes(): Promise<Uint8Array> {
    return this.#consume(BYTES) as Promise<Uint8Array>;
  }

  /** The whole body as an `ArrayBuffer`. */
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#consume(ARRAY_BUFFER) as Promise<ArrayBuffer>;
  }

  /**
   * Reads and drops the rest of the body so the connection returns to the pool; a body longer than
   * {@link DUMP_LIMIT_BYTES} is cut and its connection closed instead. Resolves with `null`.
   */
  dump(): Promise<null> {
    if (this.#state !== OPEN) {
      this.#used = true;
      this.#drop();
      return Promise.resolve(null);
    }
    if (this.#mode !== UNREAD) {
      // Already being read or streamed: the caller gives up on it.
      this.destroy();
      return Promise.resolve(null);
    }
    this.#used = true;
    this.#mode = DUMPING;
    this.#drop();
    const promise = new Promise<null>((resolve) => {
      this.#resolve = resolve as (value: unknown) => void;
    });
    if (this.#bytes > DUMP_LIMIT_BYTES)
      this.#source.stop(new BodyDestroyedError('Body longer than the dump limit: connection closed.'));
    else this.#unpause();
    return promise;
  }

  /** Stops the body: an unfinished response closes its connection; reads in progress reject. */
  destroy(error?: Error): this {
    if (this.#state === OPEN) this.#source.stop(error ?? new BodyDestroyedError());
    else this.#drop();
    if (this.#stream !== null && !this.#stream.destroyed) this.#stream.destroy(error);
    return this;
  }

  /**
   * Hands the body to `sink` chunk by chunk as it arrives (what was buffered first), without a
   * `Readable`: a sink's `data()` returning false pauses the connection until the sink calls
   * {@link unpause}. Ends with exactly one of `sink.end()` and `sink.error()`.
   */
  pipe(sink: BodySink): void {
    if (this.#used) throw new TypeError('Response body already read.');
    this.#used = true;
    this.#mode = PIPING;
    this.#sink = sink;
    const first = this.#first;
    const rest = this.#more;
    this.#drop();
    let more = true;
    if (first !== null) more = sink.data(first);
    if (rest !== null) for (const chunk of rest) more = sink.data(chunk);
    if (this.#state === ENDED) sink.end();
    else if (this.#state === FAILED) sink.error(this.#error!);
    else if (more) this.#unpause();
    else this.#paused = true;
  }

  /** The sink of {@link pipe} wants more after its `data()` returned false: the connection resumes. */
  unpause(): void {
    this.#unpause();
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this.#toStream()[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  }

  #toStream(): Readable {
    if (this.#stream !== null) return this.#stream;
    if (this.#used) throw new TypeError('Response body already read.');
    this.#used = true;
    this.#mode = STREAMING;
    const stream = new Readable({
      read: () => this.#unpause(),
      destroy: (error, callback) => {
        if (this.#state === OPEN) this.#source.stop(error ?? new BodyDestroyedError());
        callback(error);
      },
    });
    this.#stream = stream;
    if (this.#first !== null) stream.push(this.#first);
    if (this.#more !== null) for (const chunk of this.#more) stream.push(chunk);
    this.#drop();
    if (this.#state === ENDED) stream.push(null);
    else if (this.#state === FAILED) stream.destroy(this.#error!);
    return stream;
  }

  #consume(want: number): Promise<unknown> {
    if (this.#used) return Promise.reject(new TypeError('Response body already read.'));
    this.#used = true;
    this.#want = want;
    if (this.#state === FAILED) return Promise.reject(this.#error);
    if (this.#state === ENDED) {
      try {
        return Promise.resolve(this.#result());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    this.#mode = CONSUMING;
    const promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#unpause();
    return promise;
  }

  #result(): unknown {
    const first = this.#first;
    const rest = this.#more;
    this.#drop();
    const whole = rest === null ? (first ?? Buffer.alloc(0)) : Buffer.concat([first!, ...rest], this.#bytes);
    switch (this.#want) {
      case TEXT:
        return utf8(whole);
      case JSON_VALUE:
        return JSON.parse(utf8(whole));
      case BYTES:
        return new Uint8Array(whole);
      default:
        return new Uint8Array(whole).buffer;
    }
  }

  #settle(): void {
    let value: unknown;
    try {
      value = this.#result();
    } catch (error) {
      this.#fail(error);
      return;
    }
    this.#finish(value);
  }

  #finish(value: unknown): void {
    const resolve = this.#resolve;
    this.#resolve = null;
    this.#reject = null;
    resolve?.(value);
  }

  #fail(error: unknown): void {
    const reject = this.#reject;
    this.#resolve = null;
    this.#reject = null;
    reject?.(error);
  }

  #unpause(): void {
    if (!this.#paused || this.#state !== OPEN) return;
    this.#paused = false;
    this.#source.resume();
  }

  #drop(): void {
    this.#first = null;
    this.#more = null;
  }

  #unwatch(): void {
    const entry = this.#entry;
    if (entry === null) return;
    this.#timer!.delete(entry);
    this.#entry = null;
    this.#timer = null;
    entry.unwatched?.();
  }
}

/** UTF-8 text of `bytes`, without a leading byte-order mark (as `Response.text()` does). */
function utf8(bytes: Buffer): string {
  const start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', start);
}
