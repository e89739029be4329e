import { describe, expect, it } from 'vitest';
import { finishKeyHash, hashKey, KEY_HASH_PRIME } from './key-hash.js';

/** The hash a client could compute offline if the basis were FNV-1a's published one. */
function withPublishedBasis(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), KEY_HASH_PRIME);
  return finishKeyHash(h);
}

describe('the key hash', () => {
  it('spreads keys chosen to share one cell under the published basis (the basis is drawn per process)', () => {
    const cells = 1024;
    // What a client would send to make every claim walk one run of the table: keys that all start
    // at cell 0 with the published basis (≈ 1 024 tries each).
    const chosen: string[] = [];
    for (let i = 0; chosen.length < 64; i++) {
      const key = `order-${i}`;
      if ((withPublishedBasis(key) & (cells - 1)) === 0) chosen.push(key);
    }
    const home = new Set(chosen.map((key) => hashKey(key) & (cells - 1)));
    // 64 keys over 1 024 cells at random: ≈ 62 distinct cells (fewer than 48 has a chance below 10⁻¹⁰).
    expect(home.size).toBeGreaterThanOrEqual(48);
  });

  it('is an unsigned 32-bit integer, the same for the same key in this process', () => {
    for (const key of ['', 'a', 'order-1', '0b7c9e52-3f1d-4c8a-9e27-5d6f1a2b3c4d', 'ключ']) {
      const h = hashKey(key);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32).toBe(true);
      expect(hashKey(key)).toBe(h);
    }
  });
});
