import { randomBytes } from 'node:crypto';

/**
 * The 32-bit hash of a key's UTF-16 code units that the in-memory idempotency store files records
 * under: FNV-1a from a basis drawn once per process, then MurmurHash3's finaliser, whose avalanche
 * spreads keys that differ in their last characters (a counter) over the low bits that linear
 * probing uses.
 *
 * The client chooses its keys. With FNV-1a's published basis, anyone could compute offline keys that
 * all fall on one cell of the store's table (≈ 33 000 tries a key for the 32 768 cells of a store of
 * 10 000 records), and make every claim walk the run they form. The random basis takes that
 * precomputation away. It is not a keyed hash of cryptographic strength (SipHash's guarantees): it costs nothing
 * per character, and the store's table is bounded (`maxEntries`), so a run is too.
 *
 * It lives beside the headers because the `Idempotency-Key` reader computes it in the loop that
 * already reads each character of the key (`readIdempotencyKey`): a second loop over the key costs
 * more than the hash itself, the key being a slice of its header value, whose characters V8 reads
 * one builtin call each.
 * @internal
 */

let basis: number | undefined;

/**
 * The hash before any character: FNV-1a's 32-bit offset basis (0x811c9dc5) mixed with 32 random bits,
 * drawn on the first key hashed in this process, so that two processes file the same key under
 * different hashes. Drawn then rather than when the module loads: the first draw starts the
 * process's random generator (≈ 0.4 ms here), which a client that never hashes a key should not pay
 * on `import 'prazo'`.
 * @internal
 */
export function keyHashBasis(): number {
  basis ??= (0x811c9dc5 ^ randomBytes(4).readUInt32LE(0)) >>> 0;
  return basis;
}

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
  let h = keyHashBasis();
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
