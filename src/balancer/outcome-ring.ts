/**
 * The last outcomes of one instance as bits of a 32-bit integer (1 = failure, newest in bit 0):
 * pushing one is a shift and a mask, counting failures is a population count. No array, no
 * allocation, and the ring of every instance fits one `Int32Array`.
 */

/** Most outcomes a ring can hold (the width of an int32). */
export const OUTCOME_RING_MAX = 32;

/** The ring after one more outcome; only the newest `size` (1 … 32) outcomes are kept. */
export function pushOutcome(bits: number, failed: boolean, size: number): number {
  const shifted = (bits << 1) | (failed ? 1 : 0);
  return size >= OUTCOME_RING_MAX ? shifted | 0 : shifted & ((1 << size) - 1);
}

/** Number of failures held in the ring (a population count of its 32 bits). */
export function failuresIn(bits: number): number {
  let v = bits - ((bits >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
