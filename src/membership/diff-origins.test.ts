import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffOrigins } from './diff-origins.js';

describe('diffOrigins', () => {
  it('lists the origins added and removed, each in the order of its own set', () => {
    expect(
      diffOrigins(['http://a:1', 'http://b:1', 'http://c:1'], ['http://d:1', 'http://b:1', 'http://e:1']),
    ).toEqual({
      added: ['http://d:1', 'http://e:1'],
      removed: ['http://a:1', 'http://c:1'],
    });
  });

  it('sees no change in a reordering of the same set', () => {
    expect(diffOrigins(['http://a:1', 'http://b:1'], ['http://b:1', 'http://a:1'])).toEqual({
      added: [],
      removed: [],
    });
  });

  it('adds everything to an empty set and removes everything for an empty answer', () => {
    expect(diffOrigins([], ['http://a:1'])).toEqual({ added: ['http://a:1'], removed: [] });
    expect(diffOrigins(['http://a:1'], [])).toEqual({ added: [], removed: ['http://a:1'] });
  });

  it('applying the diff to the previous set gives the next set', () => {
    const set = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f').map((h) => `http://${h}:80`));
    fc.assert(
      fc.property(set, set, (previous, next) => {
        const { added, removed } = diffOrigins(previous, next);
        const result = new Set([...previous.filter((o) => !removed.includes(o)), ...added]);
        expect([...result].sort()).toEqual([...next].sort());
        expect(added.every((o) => !previous.includes(o))).toBe(true);
        expect(removed.every((o) => !next.includes(o))).toBe(true);
      }),
    );
  });
});
