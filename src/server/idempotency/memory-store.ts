import { type Clock, systemClock } from '../../clock.js';
import { InvalidOptionError } from '../../errors.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.js';

/** Options of {@link createMemoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /** Most records kept at once; beyond it the least recently written goes first. @default 10000 */
  maxEntries?: number;
  /** Most bytes of stored responses (bodies and headers, roughly) kept at once. @default 67108864 (64 MiB) */
  maxBytes?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link MemoryIdempotencyStoreOptions}. */
export const MEMORY_IDEMPOTENCY_STORE_DEFAULTS = Object.freeze({
  maxEntries: 10_000,
  maxBytes: 64 * 1024 * 1024,
});

/** A store that also reports its size (the in-memory one). */
export interface MemoryIdempotencyStore extends IdempotencyStore {
  /** Records and bytes held now, and records evicted before their expiry so far. */
  size(): { entries: number; bytes: number; evicted: number };
}

interface Entry {
  readonly key: string;
  record: IdempotencyRecord;
  expiresAt: number;
  bytes: number;
  /** Its latest write's number: a copy in the write order with another number is stale. */
  written: number;
}

/**
 * Creates the in-memory store: one process, bounded in records and bytes, each record gone at its
 * expiry. The default store of the layer; for a fleet of replicas use `createRedisIdempotencyStore`.
 *
 * Eviction: expired records go first (checked on every write, oldest first); then, beyond
 * `maxEntries` or `maxBytes`, the least recently written record, running or done — an evicted key
 * runs again if it is repeated, so size the bounds for (requests per second × record lifetime).
 * Evictions before expiry are counted in `size().evicted`.
 *
 * @throws {InvalidOptionError} for bad options.
 */
export function createMemoryIdempotencyStore(
  options: MemoryIdempotencyStoreOptions = {},
): MemoryIdempotencyStore {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object', options);
  const maxEntries = options.maxEntries ?? MEMORY_IDEMPOTENCY_STORE_DEFAULTS.maxEntries;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new InvalidOptionError('maxEntries', 'an integer ≥ 1', maxEntries);
  const maxBytes = options.maxBytes ?? MEMORY_IDEMPOTENCY_STORE_DEFAULTS.maxBytes;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new InvalidOptionError('maxBytes', 'an integer ≥ 1', maxBytes);
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function') throw new InvalidOptionError('clock', 'a Clock', clock);

  // Lookup in a Map; the write order in an array with a moving head, oldest first. Not the Map's own
  // order: V8 leaves a deleted Map entry as a hole that every iteration from the front walks over until
  // the table is rebuilt, so evicting from the front of a full Map costs O(capacity) per write (≈ 30 µs
  // per request at 10 000 records). An entry rewritten (claim, then complete) is updated in place and
  // is in the array twice, with its write number beside each copy (`written`, a parallel array of
  // small integers: no object per write); the stale copy is skipped when it comes up.
  const entries = new Map<string, Entry>();
  const order: Entry[] = [];
  const writes: number[] = [];
  let head = 0;
  let writeCount = 0;
  let bytes = 0;
  let evicted = 0;

  const live = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      remove(entry);
      return undefined;
    }
    return entry;
  };
  const remove = (entry: Entry): void => {
    entries.delete(entry.key);
    bytes -= entry.bytes;
  };
  /** Whether the write at `index` of the write order is still the entry's latest, in the Map. */
  const current = (index: number): boolean => {
    const entry = order[index]!;
    return entry.written === writes[index] && entries.get(entry.key) === entry;
  };
  /**
   * Records a write of `entry` (new, or updated in place: a delete and a new entry would leave a hole
   * in the Map's table, and a full table is rebuilt, 10 000 records copied, when the holes fill it),
   * then evicts beyond the bounds and sweeps a few expired records.
   */
  const wrote = (entry: Entry, now: number): void => {
    entry.written = ++writeCount;
    order.push(entry);
    writes.push(entry.written);
    bytes += entry.bytes;
    while ((entries.size > maxEntries || bytes > maxBytes) && head < order.length) {
      const index = head++;
      if (!current(index)) continue;
      const oldest = order[index]!;
      if (oldest.expiresAt > now) evicted++;
      remove(oldest);
    }
    // A few expired records at the front go on every write, so that memory follows the lifetimes.
    for (let swept = 0; swept < 4 && head < order.length; ) {
      if (current(head)) {
        const oldest = order[head]!;
        if (oldest.expiresAt > now) break;
        remove(oldest);
        swept++;
      }
      head++;
    }
    if (head > 1024 && head * 2 > order.length) {
      order.splice(0, head);
      writes.splice(0, head);
      head = 0;
    }
  };

  return {
    claim(key, owner, request, ttlMs) {
      const now = clock.now();
      const entry = live(key, now);
      if (entry !== undefined) return entry.record;
      const claimed: Entry = {
        key,
        record: { state: 'running', owner, request },
        expiresAt: now + ttlMs,
        bytes: 64 + key.length,
        written: 0,
      };
      entries.set(key, claimed);
      wrote(claimed, now);
      return null;
    },
    complete(key, owner, fingerprint, response, ttlMs) {
      const now = clock.now();
      const entry = live(key, now);
      if (entry === undefined || entry.record.owner !== owner || entry.record.state !== 'running')
        return false;
      bytes -= entry.bytes;
      entry.record = { state: 'done', owner, request: entry.record.request, fingerprint, response };
      entry.expiresAt = now + ttlMs;
      entry.bytes = 128 + key.length + sizeOf(response);
      wrote(entry, now);
      return true;
    },
    release(key, owner) {
      const entry = entries.get(key);
      if (entry !== undefined && entry.record.owner === owner) remove(entry);
    },
    get(key) {
      const entry = live(key, clock.now());
      return entry === undefined ? null : entry.record;
    },
    size: () => ({ entries: entries.size, bytes, evicted }),
  };
}

function sizeOf(response: StoredResponse | null): number {
  if (response === null) return 0;
  let n = response.body.byteLength;
  for (const name of Object.keys(response.headers)) {
    const value = response.headers[name]!;
    n += name.length + (typeof value === 'string' ? value.length : value.join('').length);
  }
  return n;
}
