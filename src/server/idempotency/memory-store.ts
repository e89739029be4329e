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

/**
 * One key's record, flat: the running and the done state in one object updated in place, the
 * stored response's parts as fields. A record that lives for seconds is copied by every scavenge it
 * survives and then promoted, so each object less per record is work the collector does not do on
 * every keyed request; the {@link IdempotencyRecord} a caller sees is made on the rare read that
 * finds one (a repeat), not kept.
 */
class Entry {
  readonly key: string;
  readonly owner: string;
  readonly request: string;
  /** The done record's fingerprint; '' while running. */
  fingerprint = '';
  done = false;
  /** The stored response's parts; `body` null when the response was not stored (over the bound). */
  status = 0;
  headers: Record<string, string | string[]> | null = null;
  body: Uint8Array | null = null;
  /** Its expiry, in ms after the store's `epoch` (a small integer: no heap number per record). */
  expiresAt: number;
  bytes: number;
  /** Its latest write's number: a copy in the write order with another number is stale; 0 once removed. */
  written = 0;

  constructor(key: string, owner: string, request: string, expiresAt: number) {
    this.key = key;
    this.owner = owner;
    this.request = request;
    this.expiresAt = expiresAt;
    this.bytes = 64 + key.length;
  }

  /** The record as callers see it (a new object: the entry itself changes in place). */
  record(): IdempotencyRecord {
    const { owner, request } = this;
    if (!this.done) return { state: 'running', owner, request };
    const body = this.body;
    const response = body === null ? null : { status: this.status, headers: this.headers!, body };
    return { state: 'done', owner, request, fingerprint: this.fingerprint, response };
  }
}

/**
 * A claim of the in-memory store as the layer in the same process holds it: the entry itself, so
 * that completing or releasing it looks nothing up. Opaque outside this module.
 * @internal
 */
export type HeldClaim = Entry;

/**
 * The in-memory store's operations on a held claim, found on the store under {@link HELD_CLAIMS}.
 * Each does what the store's method of the same name does for the claim's key and owner.
 * @internal Used by the idempotency layer.
 */
export interface HeldClaims {
  /** As `claim`, answering the held claim instead of null when the key was claimed. */
  claim(key: string, owner: string, request: string, ttlMs: number): IdempotencyRecord | HeldClaim;
  complete(claim: HeldClaim, fingerprint: string, response: StoredResponse | null, ttlMs: number): boolean;
  release(claim: HeldClaim): void;
}

/** Where the in-memory store keeps its {@link HeldClaims}. @internal */
export const HELD_CLAIMS = Symbol('prazo.idempotency.heldClaims');

/** Whether `found` (what {@link HeldClaims.claim} answered) is a held claim, not a record found. @internal */
export function isHeldClaim(found: IdempotencyRecord | HeldClaim): found is HeldClaim {
  return found instanceof Entry;
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
  // Expiries are kept relative to the store's creation: small integers (a Smi in V8), not a heap
  // number per record as epoch milliseconds would be.
  const epoch = clock.now();
  const order: Entry[] = [];
  const writes: number[] = [];
  let head = 0;
  let writeCount = 0;
  let bytes = 0;
  let evicted = 0;

  /** The entry of `key` unless it expired (then removed); `now` relative to `epoch`. */
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
    entry.written = 0;
    bytes -= entry.bytes;
  };
  /**
   * Whether the write at `index` of the write order is still the entry's latest, in the Map (a
   * removed entry's `written` is 0: no Map lookup here, on every write).
   */
  const current = (index: number): boolean => order[index]!.written === writes[index];
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

  const claim = (key: string, owner: string, request: string, ttlMs: number): IdempotencyRecord | Entry => {
    const now = clock.now() - epoch;
    const entry = live(key, now);
    if (entry !== undefined) return entry.record();
    const claimed = new Entry(key, owner, request, now + ttlMs);
    entries.set(key, claimed);
    wrote(claimed, now);
    return claimed;
  };
  /** Completes `entry`, found live under its key at `now` (relative to `epoch`). */
  const complete = (
    entry: Entry,
    fingerprint: string,
    response: StoredResponse | null,
    ttlMs: number,
    now: number,
  ): boolean => {
    if (entry.done) return false;
    bytes -= entry.bytes;
    entry.done = true;
    entry.fingerprint = fingerprint;
    if (response !== null) {
      entry.status = response.status;
      entry.headers = response.headers;
      entry.body = response.body;
    }
    entry.expiresAt = now + ttlMs;
    entry.bytes = 128 + entry.key.length + sizeOf(response);
    wrote(entry, now);
    return true;
  };
  // A held claim is the entry itself: it is still its key's record exactly when it was not removed
  // (`written` is 0 once removed; a key has one entry in the Map at a time), and its owner is its own.
  const held: HeldClaims = {
    claim,
    complete(entry, fingerprint, response, ttlMs) {
      if (entry.written === 0) return false;
      const now = clock.now() - epoch;
      if (entry.expiresAt <= now) {
        remove(entry);
        return false;
      }
      return complete(entry, fingerprint, response, ttlMs, now);
    },
    release(entry) {
      if (entry.written !== 0) remove(entry);
    },
  };

  const store: MemoryIdempotencyStore & { [HELD_CLAIMS]: HeldClaims } = {
    [HELD_CLAIMS]: held,
    claim(key, owner, request, ttlMs) {
      const found = claim(key, owner, request, ttlMs);
      return found instanceof Entry ? null : found;
    },
    complete(key, owner, fingerprint, response, ttlMs) {
      const now = clock.now() - epoch;
      const entry = live(key, now);
      if (entry === undefined || entry.owner !== owner) return false;
      return complete(entry, fingerprint, response, ttlMs, now);
    },
    release(key, owner) {
      const entry = entries.get(key);
      if (entry !== undefined && entry.owner === owner) remove(entry);
    },
    get(key) {
      const entry = live(key, clock.now() - epoch);
      return entry === undefined ? null : entry.record();
    },
    size: () => ({ entries: entries.size, bytes, evicted }),
  };
  return store;
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
