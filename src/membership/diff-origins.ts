/** What changed between two origin sets. */
export interface OriginsDiff {
  /** In `next`, not in `previous`, in `next`'s order. */
  readonly added: readonly string[];
  /** In `previous`, not in `next`, in `previous`'s order. */
  readonly removed: readonly string[];
}

/**
 * The origins to add and to remove to go from `previous` to `next` (both already normalised, as
 * {@link parseOriginList} returns them). Order within a set does not count as a change.
 *
 * @example
 * diffOrigins(['http://a:1', 'http://b:1'], ['http://b:1', 'http://c:1'])
 * // { added: ['http://c:1'], removed: ['http://a:1'] }
 */
export function diffOrigins(previous: readonly string[], next: readonly string[]): OriginsDiff {
  const before = new Set(previous);
  const after = new Set(next);
  return {
    added: next.filter((origin) => !before.has(origin)),
    removed: previous.filter((origin) => !after.has(origin)),
  };
}
