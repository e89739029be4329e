/**
 * An open-addressing hash table of integers: string keys to slot numbers, the keys themselves kept by
 * the owner of the slots (the in-memory idempotency store keeps them in its byte slab). Two typed
 * arrays — the cells (slot + 1, 0 for empty) and each slot's hash — so the collector sees two objects
 * whatever the number of keys, and a delete leaves no tombstone: linear probing with backward-shift
 * deletion keeps every probe sequence unbroken.
 * @see Knuth, The Art of Computer Programming vol. 3, §6.4, Algorithm R (deletion with linear probing).
 * @internal
 */
export class SlotTable {
  /** Each cell: the slot number + 1, or 0 when empty. Its length is a power of two, at least twice the slots. */
  #cells: Int32Array;
  #mask: number;
  /** Each slot's hash (the owner's hash of its key: the in-memory store's is `hashKey`, in wire/key-hash.ts). */
  #hashes: Uint32Array;
  readonly #keys: SlotKeys;

  /** A table for slots 0 … `capacity` − 1, comparing keys through `keys`. */
  constructor(capacity: number, keys: SlotKeys) {
    this.#keys = keys;
    this.#hashes = new Uint32Array(capacity);
    this.#cells = new Int32Array(cellsFor(capacity));
    this.#mask = this.#cells.length - 1;
  }

  /** The slot whose key is `key` (its hash `hash`), or -1. */
  find(key: string, hash: number): number {
    const cells = this.#cells;
    const mask = this.#mask;
    const hashes = this.#hashes;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const cell = cells[i]!;
      if (cell === 0) return -1;
      const slot = cell - 1;
      if (hashes[slot] === hash && this.#keys.keyEquals(slot, key)) return slot;
    }
  }

  /** Adds `slot` under `hash`; its key must not be in the table. */
  insert(slot: number, hash: number): void {
    this.#hashes[slot] = hash;
    const cells = this.#cells;
    const mask = this.#mask;
    let i = hash & mask;
    while (cells[i] !== 0) i = (i + 1) & mask;
    cells[i] = slot + 1;
  }

  /** Takes `slot` out (it must be in the table): the cells after it move back into the gap. */
  delete(slot: number): void {
    const cells = this.#cells;
    const mask = this.#mask;
    const hashes = this.#hashes;
    let gap = hashes[slot]! & mask;
    while (cells[gap] !== slot + 1) gap = (gap + 1) & mask;
    for (let i = (gap + 1) & mask; cells[i] !== 0; i = (i + 1) & mask) {
      const home = hashes[cells[i]! - 1]! & mask;
      // The cell at i may fill the gap unless its home lies cyclically in (gap, i].
      if (gap <= i ? home <= gap || home > i : home <= gap && home > i) {
        cells[gap] = cells[i]!;
        gap = i;
      }
    }
    cells[gap] = 0;
  }

  /** Makes room for slots up to `capacity` − 1, keeping every slot in the table. */
  grow(capacity: number): void {
    const hashes = new Uint32Array(capacity);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
    const old = this.#cells;
    this.#cells = new Int32Array(cellsFor(capacity));
    this.#mask = this.#cells.length - 1;
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.insert(old[i]! - 1, hashes[old[i]! - 1]!);
  }
}

/** What a {@link SlotTable} asks of the owner of the keys. @internal */
export interface SlotKeys {
  /** Whether the key kept for `slot` is `key`. */
  keyEquals(slot: number, key: string): boolean;
}

/** A power of two, at least twice `capacity` (a load factor of at most ½), at least 8. */
function cellsFor(capacity: number): number {
  let cells = 8;
  while (cells < capacity * 2) cells *= 2;
  return cells;
}
