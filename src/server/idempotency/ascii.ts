/**
 * A response body written as a string, as the idempotency layer keeps it: checked for ASCII (its
 * UTF-8 bytes are then its character codes) and copied into bytes — without reading it a character
 * at a time past a few dozen characters. A loop in JavaScript reads a string through a builtin call
 * a character (≈ 25–40 instructions on Node 20–24, callgrind); a regular expression's test, Node's
 * count of UTF-8 bytes and `Buffer#write` in Latin-1 cost a call and a scan or copy in native code
 * (the write ≈ 750 instructions on Node 24, ≈ 1 000 on Node 20, whatever the length): through the
 * loops, a 511-character JSON answer cost the layer ≈ 31 000 instructions more on Node 24 and
 * ≈ 43 600 more on Node 20 (BENCHMARKS.md, "An answer is not read a character at a time").
 * @internal
 */

/** Strings up to this many characters are copied by a loop; longer ones by `Buffer#write`. */
const LOOP_CHARS = 32;

/** Any character beyond ASCII (a UTF-16 code unit from 0x80 on: the expression has no `u` flag). */
const NON_ASCII = /[\u0080-\uffff]/;

/** Strings up to this many characters are checked by the regular expression; longer ones by their UTF-8 length. */
const TEST_CHARS = 64;

/**
 * Whether every character of `text` is ASCII. Past {@link TEST_CHARS} characters, by its UTF-8 length
 * (every other code unit takes two bytes or more: a pair four, a lone surrogate three), which Node
 * counts in native code — ≈ 3 instructions a character against the expression's ≈ 10 (callgrind,
 * Node 20 and 24: 1 850 against 4 900 for 512 characters, about even at 64). @internal
 */
export function isAscii(text: string): boolean {
  return text.length <= TEST_CHARS ? !NON_ASCII.test(text) : Buffer.byteLength(text, 'utf8') === text.length;
}

/** Writes `text`, ASCII characters only, into `out` from `at` (room checked by the caller). @internal */
export function writeAscii(out: Uint8Array, text: string, at: number): void {
  const n = text.length;
  if (n <= LOOP_CHARS) {
    for (let i = 0; i < n; i++) out[at + i] = text.charCodeAt(i);
    return;
  }
  const bytes = Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  bytes.write(text, at, n, 'latin1');
}
