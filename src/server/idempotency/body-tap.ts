import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Bodies up to this many bytes are their own fingerprint (base64, marked with a leading `=`). */
const INLINE_BYTES = 256;

/** The digest of an empty body (most repeats of a bodiless request need no hashing at all). */
const EMPTY_DIGEST = createHash('sha256').digest('base64url');

/**
 * A running digest of a request body (its bytes in base64 when small, else SHA-256), fed as the bytes arrive from the socket, whoever reads them
 * (the handler, a body parser, or nobody yet): the tap sits on the stream's `push`, which Node's
 * HTTP parser calls for every chunk and with null at the end, so it consumes nothing and changes
 * nothing the handler sees.
 */
export interface BodyTap {
  /** Whether the whole body went through the tap (its end was seen). */
  readonly ended: boolean;
  /** The digest so far (base64url SHA-256); the body's own once `ended`. */
  digest(): string;
  /**
   * For a small body that went whole through the tap: its bytes (the digest is `=` and their base64;
   * a store may keep the bytes and encode them on the rare read that needs the digest); otherwise
   * undefined.
   */
  small(): Uint8Array | undefined;
  /** Reads the rest of the body (nobody else will: the handler does not run) and resolves at its end. */
  drain(): Promise<void>;
}

/**
 * Installs a tap on `req`. When a body parser already consumed the stream, the digest is that of the
 * JSON text of what it made of the body: `parsedBody()` when given, else `req.body`.
 */
export function tapBody(req: IncomingMessage, parsedBody: (() => unknown) | undefined): BodyTap {
  // A body a parser already read before the tap was installed: digest what the parser made of it.
  if (req.readableEnded || req.complete) {
    const parsed = parsedBody === undefined ? (req as { body?: unknown }).body : parsedBody();
    const text = parsed === undefined ? '' : typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
    const digest = text === '' ? EMPTY_DIGEST : `~${createHash('sha256').update(text).digest('base64url')}`;
    return { ended: true, digest: () => digest, small: () => undefined, drain: () => Promise.resolve() };
  }
  return new PushTap(req);
}

/** Where the wrapper of `push` finds the tap of its request (an own property of that one request). */
const TAP = Symbol('prazo.idempotency.tap');
type Tapped = IncomingMessage & { [TAP]?: PushTap };

/**
 * The wrapper of `push`, the same function on every request, as the response capture's wrappers are:
 * no closure is made per request.
 */
function tappedPush(this: Tapped, chunk: unknown, encoding?: BufferEncoding): boolean {
  const tap = this[TAP]!;
  for (let t: PushTap | undefined = tap; t !== undefined; t = t.outer) {
    if (chunk === null) t.ended = true;
    else if (chunk !== undefined) t.take(chunk as Buffer);
  }
  return tap.push.call(this, chunk, encoding);
}

/** The tap itself: one object per request with its methods on the prototype. */
class PushTap implements BodyTap {
  ended = false;
  readonly #req: IncomingMessage;
  // Small bodies (most keyed writes: a few hundred bytes of JSON) are their own fingerprint, base64:
  // no hash object per request. Past INLINE_BYTES the bytes go through SHA-256 and are not kept.
  // A small body's chunks: the first alone (most arrive in one), all of them once there is a second.
  #one: Buffer | undefined = undefined;
  #more: Buffer[] | undefined = undefined;
  #size = 0;
  #hash: Hash | null = null;
  #digest: string | undefined = undefined;

  /** The request's own `push`, called by {@link tappedPush}. @internal */
  readonly push: IncomingMessage['push'];

  /** A tap already on the request (two layers on one request): fed too. @internal */
  readonly outer: PushTap | undefined;

  constructor(req: IncomingMessage) {
    this.#req = req;
    // A second layer on the same request shares the wrapper: the original `push` is the first's.
    this.outer = (req as Tapped)[TAP];
    this.push = this.outer?.push ?? req.push;
    (req as Tapped)[TAP] = this;
    req.push = tappedPush;
  }

  /** @internal */
  take(bytes: Buffer): void {
    this.#size += bytes.length;
    if (this.#hash === null && this.#size <= INLINE_BYTES) {
      if (this.#more !== undefined) this.#more.push(bytes);
      else if (this.#one === undefined) this.#one = bytes;
      else {
        this.#more = [this.#one, bytes];
        this.#one = undefined;
      }
      return;
    }
    if (this.#hash === null) {
      this.#hash = createHash('sha256');
      if (this.#one !== undefined) this.#hash.update(this.#one);
      for (const earlier of this.#more ?? []) this.#hash.update(earlier);
      this.#one = undefined;
      this.#more = undefined;
    }
    this.#hash.update(bytes);
  }

  small(): Uint8Array | undefined {
    if (!this.ended || this.#hash !== null) return undefined;
    if (this.#more !== undefined) {
      this.#one = Buffer.concat(this.#more);
      this.#more = undefined;
    }
    return this.#one;
  }

  digest(): string {
    if (this.#digest !== undefined) return this.#digest;
    let value: string;
    if (this.#hash === null) {
      const bytes = this.#more === undefined ? this.#one : Buffer.concat(this.#more);
      value = bytes === undefined ? EMPTY_DIGEST : `=${bytes.toString('base64')}`;
    } else if (!this.ended) return this.#hash.copy().digest('base64url');
    else value = (this.#hash as Hash).digest('base64url');
    if (this.ended) this.#digest = value;
    return value;
  }

  drain(): Promise<void> {
    const req = this.#req;
    if (this.ended || req.readableEnded) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        req.off('end', done);
        req.off('close', done);
        req.off('error', done);
        resolve();
      };
      req.on('end', done);
      req.on('close', done);
      req.on('error', done);
      req.resume();
    });
  }
}
