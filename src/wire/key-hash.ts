/**
 * The 32-bit hash of a key's UTF-16 code units that the in-memory idempotency store files records
 * under: FNV-1a, then MurmurHash3's finaliser, whose avalanche spreads keys that differ in their last
 * characters (a counter) over the low bits that linear probing uses.
 *
 * It lives beside the headers because the `Idempotency-Key` reader computes it in the loop that
 * already reads each character of the key (`readIdempotencyKey`): a second loop over the key costs
 * more than the hash itself, the key being a slice of its header value, whose characters V8 reads
 * one builtin call each.
 * @internal
 */

/** FNV-1a's 32-bit offset basis: the hash before any character. @internal */
export const KEY_HASH_BASIS = 0x811c9dc5;

/** FNV-1a's 32-bit prime: each character is folded in as `Math.imul(h ^ c, KEY_HASH_PRIME)`. @internal */
export const KEY_HASH_PRIME = 0x01000193;

/** The hash once every character is folded in (MurmurHash3's `fmix32`), an unsigned 32-bit integer. @internal */
export function finishKeyHash(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash of `key`'s characters. @internal */
export function hashKey(key: string): number {
  let h = KEY_HASH_BASIS;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), KEY_HASH_PRIME);
  return finishKeyHash(h);
}

/**
 * A key with its hash, and where its characters are to be read: `text` from `from` on, `key.length` of
 * them (the header value it came in, when the key is a slice of it). @internal
 */
export interface HashedKey {
  readonly key: string;
  readonly hash: number;
  readonly text: string;
  readonly from: number;
}

/** `key` hashed, its characters its own. @internal */
export function hashedKey(key: string): HashedKey {
  return { key, hash: hashKey(key), text: key, from: 0 };
}
