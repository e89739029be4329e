import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexSet } from './index-set.js';

describe('IndexSet', () => {
  it('holds exactly what a Set would after any adds, removes and growth', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 63 })), { maxLength: 200 }),
        (ops) => {
          const set = new IndexSet(4);
          const model = new Set<number>();
          for (const [add, slot] of ops) {
            set.grow(slot + 1);
            if (add) {
              set.add(slot);
              model.add(slot);
            } else {
              set.remove(slot);
              model.delete(slot);
            }
          }
          expect(set.size).toBe(model.size);
          expect(new Set(set.items.subarray(0, set.size))).toEqual(model);
          for (let slot = 0; slot < 64; slot++) expect(set.has(slot)).toBe(model.has(slot));
        },
      ),
    );
  });
});
