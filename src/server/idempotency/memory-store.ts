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
 * every keyed request: the layer in this process hands over the parts it already has (its owner as
 * a shared prefix and a number, the method and the request's own URL string, the body's digest, a
 * short ASCII body as the handler's own string) and the strings a caller sees (`owner`, `request`,
 * `fingerprint`) are joined, and the {@link IdempotencyRecord} made, on the rare read that finds one
 * (a repeat), not kept.
 */
class Entry {
  readonly key: string;
  /** The owner, or its shared prefix when `ownerNumber` is not -1 (the owner is then both joined). */
  readonly ownerPrefix: string;
  readonly ownerNumber: number;
  /** The request (`POST /orders`), or its method when `path` is not null (then `method path`). */
  readonly method: string;
  readonly path: string | null;
  /**
   * The done record's fingerprint (`digestKind` 0), or its body digest alone (1: the fingerprint is
   * `request digest`), or a small body's base64 (2: `request =digest`); '' while running.
   */
  digest = '';
  digestKind = 0;
  done = false;
  /** The stored response's parts; `body` null when the response was not stored (over the bound). */
  status = 0;
  headers: Record<string, string | string[]> | null = null;
  /** The body's bytes, or a string of ASCII characters, each one byte. */
  body: Uint8Array | string | null = null;
  /** Its expiry, in ms after the store's `epoch` (a small integer: no heap number per record). */
  expiresAt: number;
  bytes: number;
  /** Its latest write's number: a copy in the write order with another number is stale; 0 once removed. */
  written = 0;

  constructor(
    key: string,
    ownerPrefix: string,
    ownerNumber: number,
    method: string,
    path: string | null,
    expiresAt: number,
  ) {
    this.key = key;
    this.ownerPrefix = ownerPrefix;
    this.ownerNumber = ownerNumber;
    this.method = method;
    this.path = path;
    this.expiresAt = expiresAt;
    this.bytes = 64 + key.length;
  }

  get owner(): string {
    return this.ownerNumber === -1 ? this.ownerPrefix : `${this.ownerPrefix}${this.ownerNumber}`;
  }

  get request(): string {
    return this.path === null ? this.method : `${this.method} ${this.path}`;
  }

  /** The record as callers see it (a new object: the entry itself changes in place). */
  record(): IdempotencyRecord {
    const owner = this.owner;
    const request = this.request;
    if (!this.done) return { state: 'running', owner, request };
    const body = this.body;
    // A copy of the headers: the object may be shared with other records (see `completeParts`).
    const response =
      body === null ? null : { status: this.status, headers: { ...this.headers! }, body: bytesOf(body) };
    const kind = this.digestKind;
    const fingerprint =
      kind === 0 ? this.digest : kind === 1 ? `${request} ${this.digest}` : `${request} =${this.digest}`;
    return { state: 'done', owner, request, fingerprint, response };
  }
}

/** A body kept as ASCII characters, as bytes. */
function bytesOf(body: Uint8Array | string): Uint8Array {
  if (typeof body !== 'string') return body;
  const out = new Uint8Array(body.length);
  for (let i = 0; i < body.length; i++) out[i] = body.charCodeAt(i);
  return out;
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
  /**
   * As {@link claim} for the owner `${ownerPrefix}${ownerNumber}` and the request `${method} ${path}`,
   * given in parts: the record keeps the strings the caller already has, and joins them when read.
   */
  claimParts(
    key: string,
    ownerPrefix: string,
    ownerNumber: number,
    method: string,
    path: string,
    ttlMs: number,
  ): IdempotencyRecord | HeldClaim;
  complete(claim: HeldClaim, fingerprint: string, response: StoredResponse | null, ttlMs: number): boolean;
  /**
   * As {@link complete} with the fingerprint `${request} ${digest}` (the claim's request; with
   * `inline`, `${request} =${digest}`: the digest is a small body's base64) and the
   * response in parts; `body` null when it was not stored, a string of ASCII characters (each one
   * byte) kept as it is. Headers equal to the last stored ones are shared with them (a record read
   * answers a copy).
   */
  completeParts(
    claim: HeldClaim,
    digest: string,
    inline: boolean,
    status: number,
    headers: Record<string, string | string[]>,
    body: Uint8Array | string | null,
    ttlMs: number,
  ): boolean;
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

  const claim = (
    key: string,
    ownerPrefix: string,
    ownerNumber: number,
    method: string,
    path: string | null,
    ttlMs: number,
  ): IdempotencyRecord | Entry => {
    const now = clock.now() - epoch;
    const entry = live(key, now);
    if (entry !== undefined) return entry.record();
    const claimed = new Entry(key, ownerPrefix, ownerNumber, method, path, now + ttlMs);
    entries.set(key, claimed);
    wrote(claimed, now);
    return claimed;
  };
  /** Completes `entry`, found live under its key at `now` (relative to `epoch`). */
  /**
   * Completes `entry`, found live under its key at `now` (relative to `epoch`): `digest` is its
   * fingerprint, or the body's digest alone when `digestOnly`.
   */
  const complete = (
    entry: Entry,
    digest: string,
    digestKind: number,
    status: number,
    headers: Record<string, string | string[]>,
    body: Uint8Array | string | null,
    ttlMs: number,
    now: number,
  ): boolean => {
    if (entry.done) return false;
    bytes -= entry.bytes;
    entry.done = true;
    entry.digest = digest;
    entry.digestKind = digestKind;
    if (body !== null) {
      entry.status = status;
      entry.headers = headers;
      entry.body = body;
    }
    entry.expiresAt = now + ttlMs;
    entry.bytes = 128 + entry.key.length + (body === null ? 0 : sizeOf(headers, body));
    wrote(entry, now);
    return true;
  };
  /** The held claim `entry` if it is still its key's live record at `now`; else removed when expired. */
  const stillHeld = (entry: Entry, now: number): boolean => {
    if (entry.written === 0) return false;
    if (entry.expiresAt <= now) {
      remove(entry);
      return false;
    }
    return true;
  };
  // The last headers stored through a held claim: the next equal ones are the same object, not
  // another one held per record (a service answers most requests with the same few headers).
  let lastHeaders: Record<string, string | string[]> | null = null;
  const shared = (headers: Record<string, string | string[]>): Record<string, string | string[]> => {
    if (lastHeaders !== null && sameHeaders(headers, lastHeaders)) return lastHeaders;
    lastHeaders = headers;
    return headers;
  };
  // A held claim is the entry itself: it is still its key's record exactly when it was not removed
  // (`written` is 0 once removed; a key has one entry in the Map at a time), and its owner is its own.
  const held: HeldClaims = {
    claim: (key, owner, request, ttlMs) => claim(key, owner, -1, request, null, ttlMs),
    claimParts: claim,
    complete(entry, fingerprint, response, ttlMs) {
      const now = clock.now() - epoch;
      if (!stillHeld(entry, now)) return false;
      if (response === null) return complete(entry, fingerprint, 0, 0, EMPTY_HEADERS, null, ttlMs, now);
      const { status, headers, body } = response;
      return complete(entry, fingerprint, 0, status, headers, body, ttlMs, now);
    },
    completeParts(entry, digest, inline, status, headers, body, ttlMs) {
      const now = clock.now() - epoch;
      if (!stillHeld(entry, now)) return false;
      const kept = body === null ? headers : shared(headers);
      return complete(entry, digest, inline ? 2 : 1, status, kept, body, ttlMs, now);
    },
    release(entry) {
      if (entry.written !== 0) remove(entry);
    },
  };

  const store: MemoryIdempotencyStore & { [HELD_CLAIMS]: HeldClaims } = {
    [HELD_CLAIMS]: held,
    claim(key, owner, request, ttlMs) {
      const found = claim(key, owner, -1, request, null, ttlMs);
      return found instanceof Entry ? null : found;
    },
    complete(key, owner, fingerprint, response, ttlMs) {
      const now = clock.now() - epoch;
      const entry = live(key, now);
      if (entry === undefined || entry.owner !== owner) return false;
      if (response === null) return complete(entry, fingerprint, 0, 0, EMPTY_HEADERS, null, ttlMs, now);
      const { status, headers, body } = response;
      return complete(entry, fingerprint, 0, status, headers, body, ttlMs, now);
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

const EMPTY_HEADERS: Record<string, string | string[]> = Object.freeze({});

function sizeOf(headers: Record<string, string | string[]>, body: Uint8Array | string): number {
  let n = typeof body === 'string' ? body.length : body.byteLength;
  for (const name in headers) {
    const value = headers[name]!;
    n += name.length + (typeof value === 'string' ? value.length : value.join('').length);
  }
  return n;
}

/** Whether two stored header sets hold the same names and values (the order aside). */
function sameHeaders(a: Record<string, string | string[]>, b: Record<string, string | string[]>): boolean {
  let count = 0;
  for (const name in a) {
    const x = a[name]!;
    const y = b[name];
    if (y === undefined) return false;
    if (typeof x === 'string') {
      if (x !== y) return false;
    } else if (typeof y === 'string' || x.length !== y.length || x.some((v, i) => v !== y[i])) return false;
    count++;
  }
  for (const _ in b) count--;
  return count === 0;
}
