/**
 * The `Idempotency-Key` request header (IETF httpapi draft "The Idempotency-Key HTTP Header Field"):
 * one key per logical operation, the same on every attempt of it. The draft defines the value as an
 * Item Structured Header Field (RFC 8941) whose value is an sf-string: `Idempotency-Key: "8e03…24"`.
 */
import { randomUUID } from 'node:crypto';
import { finishKeyHash, type HashedKey, hashKey, KEY_HASH_PRIME, keyHashBasis } from './key-hash.js';

/** Name of the header (lower case, as Node hands headers over). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Longest key the parser accepts, in characters (after unquoting). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Mints a new key for one logical call, already in its wire form: a random (version 4) UUID as an
 * sf-string, e.g. `"3b1f0c9e-6a8e-4a43-9f7d-2f1c6c0f5b1e"`.
 *
 * Random rather than time-ordered (UUIDv7): the servers look keys up by hash (a Map, a Redis key), so
 * ordering buys nothing, while 122 random bits make a key impossible to guess, which matters when a
 * server does not scope keys per client. `crypto.randomUUID()` draws from a cached entropy pool:
 * ≈ 0.1 µs per key here (bench/idempotency.bench.ts).
 */
export function mintIdempotencyKey(): string {
  return `"${randomUUID()}"`;
}

/** Why a header value is not a usable key. */
export type IdempotencyKeyProblem = 'empty' | 'malformed' | 'too-long' | 'repeated';

/** What {@link parseIdempotencyKey} read: the key, or why there is none to use. */
export type ParsedIdempotencyKey =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly problem: IdempotencyKeyProblem };

/**
 * Reads an `Idempotency-Key` header value, as Node hands it over (a string; an array when repeated).
 * `undefined` means absent.
 *
 * - An sf-string (`"…"`, printable ASCII, `\"` and `\\` the only escapes), optionally followed by
 *   RFC 8941 parameters (`;name=value`, ignored), is the draft's form; the key is the unquoted text.
 * - A bare token of visible ASCII without quotes, commas or semicolons (`order-42`, as Stripe's API
 *   takes it) is accepted too, as it is.
 * - Anything else, an empty key, a key over {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters, or the
 *   header sent twice is refused with the reason (the server answers 400). Never throws.
 *
 * @example
 * parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"') // { ok: true, key: '8e03978e-…' }
 * parseIdempotencyKey('order-42') // { ok: true, key: 'order-42' }
 * parseIdempotencyKey('"open') // { ok: false, problem: 'malformed' }
 */
export function parseIdempotencyKey(
  value: string | readonly string[] | undefined,
): ParsedIdempotencyKey | undefined {
  const read = readIdempotencyKey(value);
  return read === undefined || !read.ok ? read : { ok: true, key: read.key };
}

/**
 * What {@link readIdempotencyKey} read: as {@link ParsedIdempotencyKey}, and for a key its hash
 * (`hashKey`) and where its characters are: `text` from `from` on, `key.length` of them. @internal
 */
export type ReadIdempotencyKey =
  | ({ readonly ok: true } & HashedKey)
  | { readonly ok: false; readonly problem: IdempotencyKeyProblem };

/**
 * {@link parseIdempotencyKey} for the server's idempotency layer: the same verdicts, and for a key its
 * hash, computed in the loop that checks its characters, and the header value it was read from.
 *
 * A key of 13 characters or more is a slice of its header value (a V8 `SlicedString`, as a UUID key
 * is), whose characters V8 reads through a builtin call each. Hashing the key in a loop of its own
 * cost ≈ 1 570 instructions for a 36-character key on Node 24, ≈ 180 in this loop; copying it into
 * the in-memory store from the header value rather than from the slice saves ≈ 600 more
 * (BENCHMARKS.md, the server idempotency layer's instructions).
 * @internal
 */
export function readIdempotencyKey(
  value: string | readonly string[] | undefined,
): ReadIdempotencyKey | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    if (!Array.isArray(value)) return MALFORMED;
    if (value.length !== 1) return { ok: false, problem: 'repeated' };
    return readIdempotencyKey(value[0] as string);
  }
  let start = 0;
  let end = value.length;
  while (start < end && isSpace(value.charCodeAt(start))) start++;
  while (end > start && isSpace(value.charCodeAt(end - 1))) end--;
  if (start === end) return { ok: false, problem: 'empty' };
  if (value.charCodeAt(start) !== 34 /* " */) return bareToken(value, start, end);
  // The usual key (a UUID) has no escapes: check its characters up to the closing quote, hashing them
  // on the way, and take it in one slice (one pass, no search of the string from either end).
  let close = start + 1;
  let h = keyHashBasis();
  let blank = true;
  for (; close < end; close++) {
    const c = value.charCodeAt(close);
    if (c === 34 /* " */ || c === 92 /* \ */) break;
    if (c < 0x20 || c > 0x7e) return MALFORMED;
    if (c !== 32) blank = false;
    h = Math.imul(h ^ c, KEY_HASH_PRIME);
  }
  if (close < end && value.charCodeAt(close) === 34) {
    if (close + 1 !== end && !parametersOnly(value, close + 1, end)) return MALFORMED;
    return checked(value, start + 1, close, h, blank);
  }
  let key = '';
  let i = start + 1;
  for (;;) {
    if (i >= end) return MALFORMED;
    const c = value.charCodeAt(i);
    if (c === 92 /* \ */) {
      const next = value.charCodeAt(i + 1);
      if (next !== 34 && next !== 92) return MALFORMED;
      key += value[i + 1];
      i += 2;
      continue;
    }
    if (c === 34) break;
    if (c < 0x20 || c > 0x7e) return MALFORMED;
    key += value[i];
    i++;
  }
  if (!parametersOnly(value, i + 1, end)) return MALFORMED;
  // Unescaped, the key is characters of its own (rare: a key with a quote or a backslash in it).
  return checked(key, 0, key.length, undefined, isBlank(key));
}

/**
 * The sf-string form of `key` (quotes around, `"` and `\` escaped), to put on the wire.
 * @throws {TypeError} for a key with characters an sf-string cannot carry (outside printable ASCII).
 */
export function serializeIdempotencyKey(key: string): string {
  let out = '"';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw new TypeError('An Idempotency-Key is printable ASCII only.');
    if (c === 34 || c === 92) out += '\\';
    out += key[i];
  }
  return `${out}"`;
}

/**
 * The key made of `text`'s characters from `from` to `to` (printable ASCII by then), or why it is
 * refused; `h` is its hash so far (FNV-1a's loop over those characters), or undefined when not taken.
 */
function checked(
  text: string,
  from: number,
  to: number,
  h: number | undefined,
  blank: boolean,
): ReadIdempotencyKey {
  if (blank) return { ok: false, problem: 'empty' };
  if (to - from > MAX_IDEMPOTENCY_KEY_LENGTH) return { ok: false, problem: 'too-long' };
  const key = from === 0 && to === text.length ? text : text.slice(from, to);
  return { ok: true, key, hash: h === undefined ? hashKey(key) : finishKeyHash(h), text, from };
}

/** A bare token: visible ASCII, without the characters that delimit structured fields. */
function bareToken(value: string, from: number, to: number): ReadIdempotencyKey {
  let h = keyHashBasis();
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x20 || c > 0x7e || c === 34 || c === 44 || c === 59 || c === 92) return MALFORMED;
    h = Math.imul(h ^ c, KEY_HASH_PRIME);
  }
  // Without spaces, never blank.
  return checked(value, from, to, h, false);
}

const MALFORMED: ReadIdempotencyKey = Object.freeze({ ok: false, problem: 'malformed' });

/** RFC 8941 parameters after an item: `;key` or `;key=bare-item`, with spaces before `;` names allowed. */
function parametersOnly(value: string, from: number, end: number): boolean {
  const rest = value.slice(from, end);
  return /^(?:[ \t]*;[ \t]*[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\["\\])*"|[^;,\s"]+))?)*$/.test(rest);
}

function isBlank(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) !== 32) return false;
  return true;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}
