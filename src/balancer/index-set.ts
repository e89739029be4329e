/**
 * A set of small non-negative integers (instance slots) with O(1) add, remove, membership and
 * uniform random access: the members are kept dense in one array, each member's position in a
 * second. Removing swaps the last member into the hole, so the order is not kept.
 */
export class IndexSet {
  /** The members, dense in `items[0 … size)`. */
  items: Int32Array;
  /** Position of each slot in `items`, or -1. */
  #pos: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Int32Array(capacity);
    this.#pos = new Int32Array(capacity).fill(-1);
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.#pos.length && this.#pos[slot]! >= 0;
  }

  add(slot: number): void {
    if (this.has(slot)) return;
    this.items[this.size] = slot;
    this.#pos[slot] = this.size++;
  }

  remove(slot: number): void {
    if (!this.has(slot)) return;
    const at = this.#pos[slot]!;
    const last = this.items[--this.size]!;
    this.items[at] = last;
    this.#pos[last] = at;
    this.#pos[slot] = -1;
  }

  /** Makes room for slots below `capacity` (never shrinks). */
  grow(capacity: number): void {
    if (capacity <= this.#pos.length) return;
    const items = new Int32Array(capacity);
    items.set(this.items);
    const pos = new Int32Array(capacity).fill(-1);
    pos.set(this.#pos);
    this.items = items;
    this.#pos = pos;
  }
}
