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
  key: string;
  record: IdempotencyRecord;
  expiresAt: number;
  bytes: number;
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
  // per request at 10 000 records). An entry rewritten (claim, then complete) is in the array twice;
  // the stale copy is skipped when it comes up.
  const entries = new Map<string, Entry>();
  const order: Entry[] = [];
  let head = 0;
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
  /** Writes `entry` over `replaced` (the key's live entry, which the caller already looked up). */
  const put = (entry: Entry, now: number, replaced: Entry | undefined): void => {
    // A rewritten key's entry is replaced where it is: a delete would leave a hole in the Map's table,
    // two per request with the claim's, and a full table is rebuilt (10 000 records copied) when the
    // holes fill it.
    if (replaced !== undefined) bytes -= replaced.bytes;
    entries.set(entry.key, entry);
    order.push(entry);
    bytes += entry.bytes;
    while ((entries.size > maxEntries || bytes > maxBytes) && head < order.length) {
      const oldest = order[head++]!;
      if (entries.get(oldest.key) !== oldest) continue;
      if (oldest.expiresAt > now) evicted++;
      remove(oldest);
    }
    // A few expired records at the front go on every write, so that memory follows the lifetimes.
    for (let swept = 0; swept < 4 && head < order.length; ) {
      const oldest = order[head]!;
      if (entries.get(oldest.key) === oldest) {
        if (oldest.expiresAt > now) break;
        remove(oldest);
        swept++;
      }
      head++;
    }
    if (head > 1024 && head * 2 > order.length) {
      order.splice(0, head);
      head = 0;
    }
  };

  return {
    claim(key, owner, request, ttlMs) {
      const now = clock.now();
      const entry = live(key, now);
      if (entry !== undefined) return entry.record;
      put(
        {
          key,
          record: { state: 'running', owner, request },
          expiresAt: now + ttlMs,
          bytes: 64 + key.length,
        },
        now,
        undefined,
      );
      return null;
    },
    complete(key, owner, fingerprint, response, ttlMs) {
      const now = clock.now();
      const entry = live(key, now);
      if (entry === undefined || entry.record.owner !== owner || entry.record.state !== 'running')
        return false;
      put(
        {
          key,
          record: { state: 'done', owner, request: entry.record.request, fingerprint, response },
          expiresAt: now + ttlMs,
          bytes: 128 + key.length + sizeOf(response),
        },
        now,
        entry,
      );
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
