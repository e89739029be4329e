import { type Clock, systemClock } from '../../clock.js';
import { InvalidOptionError } from '../../errors.js';
import { type HashedKey, hashedKey, hashKey } from '../../wire/key-hash.js';
import { writeAscii } from './ascii.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.js';
import { type SlotKeys, SlotTable } from './slot-table.js';

/** A string last interned and its number (-1: none, or the interned list was full). */
interface LastInterned {
  text: string;
  id: number;
}

/** Options of {@link createMemoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /**
   * Most records kept at once; beyond it the least recently written goes first. Each record held
   * takes a slot of the store's slab (1 KiB, plus ≈ 100 bytes of bookkeeping in typed arrays):
   * the slab grows with the records, up to `maxEntries` slots (≈ 11 MiB at the default). From 1 to
   * 2^31 − 1. @default 10000
   */
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
 * Bytes of the slab per record: its key, owner, request, digest, stored headers and body, in Latin-1
 * (one byte a character). A record whose parts do not fit, or hold a character beyond U+00FF, keeps
 * them in one {@link SideRecord} object instead; its bookkeeping stays in the typed arrays.
 * @internal
 */
export const SLOT_BYTES = 1024;
/** Slots made at first; the arrays double, up to `maxEntries`, as records arrive. */
const FIRST_CAPACITY = 16;
/** Strings interned per store (owner prefixes, methods): a record keeps their number. */
const MAX_INTERNED = 64;
/**
 * Paths interned per store, apart from the strings above: most keyed requests of a service go to a
 * few routes, whose records then keep a number instead of the path's characters (each one written
 * into the slab costs a few dozen instructions). Paths that carry ids fill the list once and are
 * written out after that.
 */
const MAX_INTERNED_PATHS = 16;
/**
 * Longest path interned: an interned path stays for the store's life, where a record's leaves with
 * it, so a long path (a query string with a token in it) is written into its records instead.
 */
const MAX_INTERNED_PATH_LENGTH = 128;
/** Header sets shared per store; a response with others keeps its headers in its slot. */
const MAX_HEADER_SETS = 64;

/** A slot's state. */
const FREE = 0;
const RUNNING = 1;
const DONE = 2;
/** A slot's parts in the slab, in this order; their lengths in `lengths`, FIELDS to a slot. */
const KEY = 0;
const OWNER = 1;
const PATH = 2;
const DIGEST = 3;
const HEADERS = 4;
const BODY = 5;
const FIELDS = 6;

/**
 * A record whose parts did not fit its slot (a body or headers over {@link SLOT_BYTES} with the rest,
 * a character beyond Latin-1): the strings a caller sees, whole, and the response as given.
 */
class SideRecord {
  readonly key: string;
  readonly owner: string;
  readonly request: string;
  fingerprint = '';
  status = 0;
  headers: Record<string, string | string[]> | null = null;
  body: Uint8Array | string | null = null;

  constructor(key: string, owner: string, request: string) {
    this.key = key;
    this.owner = owner;
    this.request = request;
  }
}

/**
 * The in-memory store's records, none of them a JavaScript object: a record is a slot number; its
 * key, owner, request, digest, headers and body are bytes in one preallocated slab (a Buffer,
 * {@link SLOT_BYTES} a slot), its expiry, size, state and place in the write order are entries of
 * typed arrays, and the key's lookup is a {@link SlotTable} of integers over the slab. The collector
 * sees a dozen objects whatever the number of records, and a record that ends (expired, evicted,
 * released) is a few integers written, not a `Map` delete. The write order is a doubly linked list
 * of slots in two Int32Arrays (oldest first): a write moves its slot to the end, an eviction takes
 * the first.
 */
class SlabStore implements SlotKeys {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly clock: Clock;
  /** Expiries are kept relative to the store's creation. */
  readonly #epoch: number;
  readonly #table: SlotTable;

  #capacity = 0;
  /** Slots handed out at least once (those below it that are free are in `#free`). */
  #used = 0;
  #free = new Int32Array(0);
  #freeCount = 0;
  #slab = Buffer.alloc(0);
  #lengths = new Int32Array(0);
  #state = new Uint8Array(0);
  /** 1 when a done record stored its response (not over the bound). */
  #stored = new Uint8Array(0);
  /**
   * How a done record's fingerprint is made from its digest: 0 as it is, 1 `request digest`, 2
   * `request =base64` (the digest is a small body's own bytes).
   */
  #digestKind = new Uint8Array(0);
  #status = new Uint16Array(0);
  /** The owner's interned prefix (its owner is `prefix` + `#ownerNumbers`), or -1: the owner whole in the slab. */
  #ownerPrefixes = new Int32Array(0);
  #ownerNumbers = new Float64Array(0);
  /** The interned method (its request is `method path`), or -1: the request whole in the slab. */
  #methods = new Int32Array(0);
  /** With an interned method, the interned path, or -1: the path in the slab. */
  #paths = new Int32Array(0);
  #expiresAt = new Float64Array(0);
  #bytes = new Float64Array(0);
  /** Each slot's claim number (0 when free): a held claim of an earlier record in the slot is told by it. */
  #claims = new Float64Array(0);
  #prev = new Int32Array(0);
  #next = new Int32Array(0);
  #head = -1;
  #tail = -1;
  #sides: (SideRecord | undefined)[] = [];

  #count = 0;
  #totalBytes = 0;
  /** Characters of names and values the last {@link #putHeaders} wrote (a record's size counts them). */
  #headerChars = 0;
  /**
   * Header sets shared by records (most responses of a service carry the same few headers): a done
   * record whose headers equal one of them keeps its number in `#headerSets` instead of the bytes.
   * Each set is a copy, with its characters counted once.
   */
  readonly #sharedHeaders: Record<string, string | string[]>[] = [];
  /** Each shared set's names, in their order. */
  readonly #sharedHeaderNames: string[][] = [];
  readonly #sharedHeaderChars: number[] = [];
  /** The set last shared and the one before it (or -1): the only ones compared. */
  #lastHeaders = -1;
  #previousHeaders = -1;
  /** Each slot's shared header set, or -1: its headers are in the slab. */
  #headerSets = new Int32Array(0);
  #evicted = 0;
  #claimCount = 0;
  /** Claim numbers wrap before a held claim (claim number × maxEntries + slot) leaves the safe integers. */
  readonly #claimWrap: number;

  readonly #interned: string[] = [];
  readonly #internedPaths: string[] = [];
  /** The last owner prefix, method and path interned, each with its number: most writes repeat them. */
  readonly #lastPrefix: LastInterned = { text: '', id: -1 };
  readonly #lastMethod: LastInterned = { text: '', id: -1 };
  readonly #lastPath: LastInterned = { text: '', id: -1 };

  constructor(maxEntries: number, maxBytes: number, clock: Clock) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
    this.clock = clock;
    this.#epoch = clock.now();
    this.#claimWrap = Math.floor(Number.MAX_SAFE_INTEGER / maxEntries) - 1;
    const capacity = Math.min(maxEntries, FIRST_CAPACITY);
    this.#table = new SlotTable(capacity, this);
    this.#resize(capacity);
  }

  /** Now, relative to the store's creation: `at` when given (epoch ms of this store's clock), else read. */
  now(at?: number): number {
    return (at ?? this.clock.now()) - this.#epoch;
  }

  size(): { entries: number; bytes: number; evicted: number } {
    return { entries: this.#count, bytes: this.#totalBytes, evicted: this.#evicted };
  }

  // --- the key ---------------------------------------------------------------------------------

  keyEquals(slot: number, key: string): boolean {
    const side = this.#sides[slot];
    if (side !== undefined) return side.key === key;
    return this.#lengths[slot * FIELDS + KEY] === key.length && this.#equalsAt(key, slot * SLOT_BYTES);
  }

  /** The live slot of `key` (its hash `hash`), or -1; an expired one is removed. */
  live(key: string, hash: number, now: number): number {
    const slot = this.#table.find(key, hash);
    if (slot === -1) return -1;
    if (this.#expiresAt[slot]! <= now) {
      this.#remove(slot);
      return -1;
    }
    return slot;
  }

  /** The slot of `key`, expired or not, or -1. */
  find(key: string): number {
    return this.#table.find(key, hashKey(key));
  }

  // --- claims ----------------------------------------------------------------------------------

  /**
   * Claims `key` at `now`: the record found, or the held claim (a number) of a new running record. The
   * owner is `owner` whole when `ownerNumber` is -1, else `owner` + `ownerNumber`; the request is
   * `method` whole when `path` is null, else `method path`.
   */
  claim(
    hashed: HashedKey,
    owner: string,
    ownerNumber: number,
    method: string,
    path: string | null,
    ttlMs: number,
    now: number,
  ): IdempotencyRecord | number {
    const { key, hash } = hashed;
    const found = this.live(key, hash, now);
    if (found !== -1) return this.record(found);
    // The oldest record makes room for this one (it would be evicted after the write all the same).
    if (this.#count >= this.#maxEntries) this.#evictOldest(now);
    const slot = this.#allocate();
    const claim = this.#claimCount >= this.#claimWrap ? 1 : this.#claimCount + 1;
    this.#claimCount = claim;
    this.#claims[slot] = claim;
    this.#state[slot] = RUNNING;
    this.#stored[slot] = 0;
    this.#expiresAt[slot] = now + ttlMs;
    const bytes = 64 + key.length;
    this.#bytes[slot] = bytes;
    this.#totalBytes += bytes;
    this.#count++;
    this.#writeClaim(slot, hashed, owner, ownerNumber, method, path);
    this.#table.insert(slot, hash);
    this.#append(slot);
    this.#settle(now);
    return claim * this.#maxEntries + slot;
  }

  /** The slot of the held claim `claim` if it is still its key's live record at `now`, else -1 (removed when expired). */
  held(claim: number, now: number): number {
    const slot = claim % this.#maxEntries;
    if (this.#claims[slot] !== (claim - slot) / this.#maxEntries) return -1;
    if (this.#expiresAt[slot]! <= now) {
      this.#remove(slot);
      return -1;
    }
    return slot;
  }

  /** Releases the held claim `claim` if its record is still there. */
  releaseHeld(claim: number): void {
    const slot = claim % this.#maxEntries;
    if (this.#claims[slot] === (claim - slot) / this.#maxEntries) this.#remove(slot);
  }

  /** Whether the record in `slot` is `owner`'s. */
  ownedBy(slot: number, owner: string): boolean {
    const side = this.#sides[slot];
    if (side !== undefined) return side.owner === owner;
    const prefix = this.#ownerPrefixes[slot]!;
    if (prefix !== -1) return owner === `${this.#interned[prefix]}${this.#ownerNumbers[slot]}`;
    const at = slot * SLOT_BYTES + this.#lengths[slot * FIELDS + KEY]!;
    return this.#lengths[slot * FIELDS + OWNER] === owner.length && this.#equalsAt(owner, at);
  }

  remove(slot: number): void {
    this.#remove(slot);
  }

  /**
   * Completes the running record in `slot` at `now`: `digest` is its fingerprint (a string, `digestKind`
   * 0), the part after its request (a string, 1: `request digest`), or a small body's bytes (2:
   * `request =base64`); `body` null when the
   * response was not stored, a string of ASCII characters (each one byte) or bytes. False when the
   * record was done already.
   */
  complete(
    slot: number,
    digest: string | Uint8Array,
    digestKind: number,
    status: number,
    headers: Record<string, string | string[]>,
    body: Uint8Array | string | null,
    ttlMs: number,
    now: number,
  ): boolean {
    if (this.#state[slot] === DONE) return false;
    this.#state[slot] = DONE;
    this.#totalBytes -= this.#bytes[slot]!;
    this.#expiresAt[slot] = now + ttlMs;
    if (body !== null) {
      this.#stored[slot] = 1;
      this.#status[slot] = status;
    }
    let size = 128 + this.#lengths[slot * FIELDS + KEY]!;
    if (this.#sides[slot] === undefined && this.#writeDone(slot, digest, digestKind, headers, body)) {
      if (body !== null) size += body.length + this.#headerChars;
    } else {
      if (body !== null) size += sizeOf(headers, body);
      const side = this.#toSide(slot);
      const request = side.request;
      side.fingerprint =
        typeof digest !== 'string'
          ? `${request} =${Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('base64')}`
          : digestKind === 0
            ? digest
            : `${request} ${digest}`;
      if (body !== null) {
        side.status = status;
        side.headers = headers;
        side.body = body;
      }
    }
    this.#bytes[slot] = size;
    this.#totalBytes += size;
    this.#unlink(slot);
    this.#append(slot);
    this.#settle(now);
    return true;
  }

  /** The record in `slot` as callers see it (a new object: the slot changes in place). */
  record(slot: number): IdempotencyRecord {
    const side = this.#sides[slot];
    const owner = side?.owner ?? this.#ownerOf(slot);
    const request = side?.request ?? this.#requestOf(slot);
    if (this.#state[slot] !== DONE) return { state: 'running', owner, request };
    let fingerprint: string;
    let response: StoredResponse | null = null;
    if (side !== undefined) {
      fingerprint = side.fingerprint;
      if (side.body !== null)
        // A copy of the headers: the object is the caller's, or the capture's.
        response = { status: side.status, headers: { ...side.headers! }, body: bytesOf(side.body) };
    } else {
      const f = slot * FIELDS;
      const lengths = this.#lengths;
      let at = slot * SLOT_BYTES + lengths[f + KEY]! + lengths[f + OWNER]! + lengths[f + PATH]!;
      const kind = this.#digestKind[slot];
      const digest = this.#slab.toString(kind === 2 ? 'base64' : 'latin1', at, at + lengths[f + DIGEST]!);
      fingerprint = kind === 0 ? digest : kind === 1 ? `${request} ${digest}` : `${request} =${digest}`;
      if (this.#stored[slot] === 1) {
        at += lengths[f + DIGEST]!;
        const set = this.#headerSets[slot]!;
        const headers =
          set === -1
            ? this.#readHeaders(at, at + lengths[f + HEADERS]!)
            : copyHeaders(this.#sharedHeaders[set]!);
        at += lengths[f + HEADERS]!;
        const body = new Uint8Array(lengths[f + BODY]!);
        body.set(this.#slab.subarray(at, at + body.length));
        response = { status: this.#status[slot]!, headers, body };
      }
    }
    return { state: 'done', owner, request, fingerprint, response };
  }

  // --- the slab ----------------------------------------------------------------------------------

  /** Writes a claim's key, owner and request into `slot`; a part that does not fit puts them on the side. */
  #writeClaim(
    slot: number,
    hashed: HashedKey,
    owner: string,
    ownerNumber: number,
    method: string,
    path: string | null,
  ): void {
    const base = slot * SLOT_BYTES;
    const end = base + SLOT_BYTES;
    const f = slot * FIELDS;
    const lengths = this.#lengths;
    let ownerPrefix = -1;
    let ownerText = owner;
    if (ownerNumber !== -1) {
      ownerPrefix = this.#internLast(this.#lastPrefix, this.#interned, MAX_INTERNED, owner);
      if (ownerPrefix === -1) ownerText = `${owner}${ownerNumber}`;
    }
    let methodId = -1;
    let pathId = -1;
    let pathText = method;
    if (path !== null) {
      methodId = this.#internLast(this.#lastMethod, this.#interned, MAX_INTERNED, method);
      if (methodId === -1) pathText = `${method} ${path}`;
      else {
        if (path.length <= MAX_INTERNED_PATH_LENGTH)
          pathId = this.#internLast(this.#lastPath, this.#internedPaths, MAX_INTERNED_PATHS, path);
        pathText = pathId === -1 ? path : '';
      }
    }
    this.#ownerPrefixes[slot] = ownerPrefix;
    this.#ownerNumbers[slot] = ownerNumber;
    this.#methods[slot] = methodId;
    this.#paths[slot] = pathId;
    const key = hashed.key;
    let at = this.#put(hashed.text, base, end, hashed.from, key.length);
    lengths[f + KEY] = key.length;
    if (at !== -1 && ownerPrefix === -1) at = this.#put(ownerText, at, end);
    lengths[f + OWNER] = ownerPrefix === -1 ? ownerText.length : 0;
    if (at !== -1 && pathText !== '') at = this.#put(pathText, at, end);
    lengths[f + PATH] = pathText.length;
    if (at === -1) {
      const request = path === null ? method : `${method} ${path}`;
      const whole = ownerNumber === -1 ? owner : `${owner}${ownerNumber}`;
      this.#sides[slot] = new SideRecord(key, whole, request);
    }
  }

  /** Writes a completion's digest, headers and body after the claim's parts; false when they do not fit. */
  #writeDone(
    slot: number,
    digest: string | Uint8Array,
    digestKind: number,
    headers: Record<string, string | string[]>,
    body: Uint8Array | string | null,
  ): boolean {
    const f = slot * FIELDS;
    const lengths = this.#lengths;
    const base = slot * SLOT_BYTES;
    const end = base + SLOT_BYTES;
    let at = base + lengths[f + KEY]! + lengths[f + OWNER]! + lengths[f + PATH]!;
    if (typeof digest === 'string') at = this.#put(digest, at, end);
    else at = this.#putBytes(digest, at, end);
    if (at === -1) return false;
    lengths[f + DIGEST] = digest.length;
    this.#digestKind[slot] = digestKind;
    this.#headerChars = 0;
    if (body === null) return true;
    const set = this.#sharedSet(headers);
    this.#headerSets[slot] = set;
    if (set !== -1) {
      this.#headerChars = this.#sharedHeaderChars[set]!;
      lengths[f + HEADERS] = 0;
    } else {
      const headersAt = at;
      at = this.#putHeaders(headers, at, end);
      if (at === -1) return false;
      lengths[f + HEADERS] = at - headersAt;
    }
    if ((typeof body === 'string' ? this.#putAscii(body, at, end) : this.#putBytes(body, at, end)) === -1)
      return false;
    lengths[f + BODY] = body.length;
    return true;
  }

  /** Moves the record in `slot` to the side, as strings (its parts in the slab are then unused). */
  #toSide(slot: number): SideRecord {
    const existing = this.#sides[slot];
    if (existing !== undefined) return existing;
    const base = slot * SLOT_BYTES;
    const key = this.#slab.toString('latin1', base, base + this.#lengths[slot * FIELDS + KEY]!);
    const side = new SideRecord(key, this.#ownerOf(slot), this.#requestOf(slot));
    this.#sides[slot] = side;
    return side;
  }

  /**
   * `text` (its `n` characters from `from` on) written at `at` as Latin-1; the position after it, or -1
   * when it passes `end` or has a wider character.
   */
  #put(text: string, at: number, end: number, from = 0, n = text.length): number {
    if (at + n > end) return -1;
    const slab = this.#slab;
    let wide = 0;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(from + i);
      wide |= c;
      slab[at + i] = c;
    }
    return wide > 0xff ? -1 : at + n;
  }

  /** `text`, ASCII characters only, written at `at`; the position after it, or -1 when it passes `end`. */
  #putAscii(text: string, at: number, end: number): number {
    if (at + text.length > end) return -1;
    writeAscii(this.#slab, text, at);
    return at + text.length;
  }

  /** `bytes` written at `at`; the position after them, or -1 when they pass `end`. */
  #putBytes(bytes: Uint8Array, at: number, end: number): number {
    const n = bytes.length;
    if (at + n > end) return -1;
    // TypedArray.prototype.set's call, even for a few dozen bytes (a small body's fingerprint): copied
    // one by one, a 24-byte fingerprint took ≈ 440 instructions on Node 24 and ≈ 780 on Node 20
    // (callgrind, the store's claim and completion in a loop), the call ≈ 160.
    this.#slab.set(bytes, at);
    return at + n;
  }

  /** Whether the bytes at `at` are `text`'s characters (its length checked by the caller). */
  #equalsAt(text: string, at: number): boolean {
    const slab = this.#slab;
    for (let i = 0; i < text.length; i++) if (slab[at + i] !== text.charCodeAt(i)) return false;
    return true;
  }

  /**
   * The number of the shared set equal to `headers` — of the last two shared, the only ones compared,
   * so that a service whose every response has headers of its own pays two comparisons —, a new set
   * made of them when there is room, or -1 (then they go into the slot as bytes).
   */
  #sharedSet(headers: Record<string, string | string[]>): number {
    const last = this.#lastHeaders;
    if (last !== -1 && this.#sameHeaders(headers, last)) return last;
    const previous = this.#previousHeaders;
    if (previous !== -1 && this.#sameHeaders(headers, previous)) {
      this.#lastHeaders = previous;
      this.#previousHeaders = last;
      return previous;
    }
    const sets = this.#sharedHeaders;
    if (sets.length >= MAX_HEADER_SETS) return -1;
    this.#previousHeaders = last;
    const names: string[] = [];
    let chars = 0;
    for (const name in headers) {
      const value = headers[name]!;
      names.push(name);
      chars += name.length + (typeof value === 'string' ? value.length : value.join('').length);
    }
    sets.push(copyHeaders(headers));
    this.#sharedHeaderNames.push(names);
    this.#sharedHeaderChars.push(chars);
    this.#lastHeaders = sets.length - 1;
    return this.#lastHeaders;
  }

  /** Whether `headers` has the names of the shared set `set`, in the same order, with the same values. */
  #sameHeaders(headers: Record<string, string | string[]>, set: number): boolean {
    const names = this.#sharedHeaderNames[set]!;
    const values = this.#sharedHeaders[set]!;
    let i = 0;
    for (const name in headers) {
      if (name !== names[i]) return false;
      const x = headers[name]!;
      const y = values[name]!;
      if (typeof x === 'string') {
        if (x !== y) return false;
      } else if (typeof y === 'string' || x.length !== y.length) return false;
      else for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
      i++;
    }
    return i === names.length;
  }

  /**
   * Headers as bytes: per name, its length (1 byte), its count of values (1 byte: 0 for a single
   * string), the name, then each value's length (2 bytes) and the value. -1 when they do not fit.
   */
  #putHeaders(headers: Record<string, string | string[]>, at: number, end: number): number {
    const slab = this.#slab;
    let chars = 0;
    for (const name in headers) {
      const value = headers[name]!;
      const many = typeof value !== 'string';
      if (name.length > 0xff || at + 2 > end || (many && value.length > 0xff)) return -1;
      chars += name.length;
      slab[at] = name.length;
      slab[at + 1] = many ? value.length : 0;
      at = this.#put(name, at + 2, end);
      if (at === -1) return -1;
      if (many) {
        for (let i = 0; i < value.length; i++) {
          at = this.#putValue(value[i]!, at, end);
          if (at === -1) return -1;
          chars += value[i]!.length;
        }
      } else {
        at = this.#putValue(value, at, end);
        chars += value.length;
      }
      if (at === -1) return -1;
    }
    this.#headerChars = chars;
    return at;
  }

  #putValue(value: string, at: number, end: number): number {
    if (value.length > 0xffff || at + 2 > end) return -1;
    this.#slab[at] = value.length & 0xff;
    this.#slab[at + 1] = value.length >>> 8;
    return this.#put(value, at + 2, end);
  }

  #readHeaders(at: number, end: number): Record<string, string | string[]> {
    const slab = this.#slab;
    const headers: Record<string, string | string[]> = {};
    while (at < end) {
      const nameLength = slab[at]!;
      const count = slab[at + 1]!;
      const name = slab.toString('latin1', at + 2, at + 2 + nameLength);
      at += 2 + nameLength;
      if (count === 0) {
        const length = slab[at]! | (slab[at + 1]! << 8);
        headers[name] = slab.toString('latin1', at + 2, at + 2 + length);
        at += 2 + length;
      } else {
        const values: string[] = [];
        for (let i = 0; i < count; i++) {
          const length = slab[at]! | (slab[at + 1]! << 8);
          values.push(slab.toString('latin1', at + 2, at + 2 + length));
          at += 2 + length;
        }
        headers[name] = values;
      }
    }
    return headers;
  }

  #ownerOf(slot: number): string {
    const prefix = this.#ownerPrefixes[slot]!;
    if (prefix !== -1) return `${this.#interned[prefix]}${this.#ownerNumbers[slot]}`;
    const at = slot * SLOT_BYTES + this.#lengths[slot * FIELDS + KEY]!;
    return this.#slab.toString('latin1', at, at + this.#lengths[slot * FIELDS + OWNER]!);
  }

  #requestOf(slot: number): string {
    const f = slot * FIELDS;
    const at = slot * SLOT_BYTES + this.#lengths[f + KEY]! + this.#lengths[f + OWNER]!;
    const pathId = this.#paths[slot]!;
    const path =
      pathId !== -1
        ? this.#internedPaths[pathId]!
        : this.#slab.toString('latin1', at, at + this.#lengths[f + PATH]!);
    const method = this.#methods[slot]!;
    return method === -1 ? path : `${this.#interned[method]} ${path}`;
  }

  /** {@link intern}, answered from `last` when `text` is the one it holds. */
  #internLast(last: LastInterned, interned: string[], max: number, text: string): number {
    if (text === last.text && last.id !== -1) return last.id;
    const id = intern(interned, max, text);
    last.text = text;
    last.id = id;
    return id;
  }

  // --- slots, the write order, bounds -----------------------------------------------------------

  #allocate(): number {
    if (this.#freeCount > 0) return this.#free[--this.#freeCount]!;
    if (this.#used === this.#capacity) this.#grow();
    return this.#used++;
  }

  /** Doubles the slots (up to `maxEntries`): every array copied, the table rebuilt. */
  #grow(): void {
    const capacity = Math.min(this.#maxEntries, this.#capacity * 2);
    this.#resize(capacity);
    this.#table.grow(capacity);
  }

  /** Makes every per-slot array `capacity` slots long, the slots so far copied over. */
  #resize(capacity: number): void {
    const grown = <T extends Int32Array | Uint8Array | Uint16Array | Float64Array>(
      old: T,
      make: new (n: number) => T,
      n = capacity,
    ): T => {
      const array = new make(n);
      array.set(old);
      return array;
    };
    this.#free = grown(this.#free, Int32Array);
    const slab = Buffer.alloc(capacity * SLOT_BYTES);
    this.#slab.copy(slab);
    this.#slab = slab;
    this.#lengths = grown(this.#lengths, Int32Array, capacity * FIELDS);
    this.#state = grown(this.#state, Uint8Array);
    this.#stored = grown(this.#stored, Uint8Array);
    this.#digestKind = grown(this.#digestKind, Uint8Array);
    this.#status = grown(this.#status, Uint16Array);
    this.#headerSets = grown(this.#headerSets, Int32Array);
    this.#ownerPrefixes = grown(this.#ownerPrefixes, Int32Array);
    this.#ownerNumbers = grown(this.#ownerNumbers, Float64Array);
    this.#methods = grown(this.#methods, Int32Array);
    this.#paths = grown(this.#paths, Int32Array);
    this.#expiresAt = grown(this.#expiresAt, Float64Array);
    this.#bytes = grown(this.#bytes, Float64Array);
    this.#claims = grown(this.#claims, Float64Array);
    this.#prev = grown(this.#prev, Int32Array);
    this.#next = grown(this.#next, Int32Array);
    this.#capacity = capacity;
  }

  #append(slot: number): void {
    const tail = this.#tail;
    this.#prev[slot] = tail;
    this.#next[slot] = -1;
    if (tail === -1) this.#head = slot;
    else this.#next[tail] = slot;
    this.#tail = slot;
  }

  #unlink(slot: number): void {
    const prev = this.#prev[slot]!;
    const next = this.#next[slot]!;
    if (prev === -1) this.#head = next;
    else this.#next[prev] = next;
    if (next === -1) this.#tail = prev;
    else this.#prev[next] = prev;
  }

  #remove(slot: number): void {
    this.#table.delete(slot);
    this.#unlink(slot);
    this.#totalBytes -= this.#bytes[slot]!;
    this.#state[slot] = FREE;
    this.#claims[slot] = 0;
    if (this.#sides[slot] !== undefined) this.#sides[slot] = undefined;
    this.#free[this.#freeCount++] = slot;
    this.#count--;
  }

  #evictOldest(now: number): void {
    const oldest = this.#head;
    if (this.#expiresAt[oldest]! > now) this.#evicted++;
    this.#remove(oldest);
  }

  /** After a write: the oldest records go while over `maxBytes`, then a few expired ones at the front. */
  #settle(now: number): void {
    while (this.#totalBytes > this.#maxBytes && this.#head !== -1) this.#evictOldest(now);
    // A few expired records at the front go on every write, so that memory follows the lifetimes.
    for (let swept = 0; swept < 4 && this.#head !== -1; swept++) {
      if (this.#expiresAt[this.#head]! > now) break;
      this.#remove(this.#head);
    }
  }
}

/** The number of `text` among `interned`, added if there is room (fewer than `max`); -1 when full. */
function intern(interned: string[], max: number, text: string): number {
  const at = interned.indexOf(text);
  if (at !== -1) return at;
  if (interned.length >= max) return -1;
  interned.push(text);
  return interned.length - 1;
}

/** A copy of a set of headers (its arrays copied too): what a caller gets is its own. */
function copyHeaders(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const copy: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name]!;
    copy[name] = typeof value === 'string' ? value : [...value];
  }
  return copy;
}

/** A body kept as ASCII characters, as bytes. */
function bytesOf(body: Uint8Array | string): Uint8Array {
  if (typeof body !== 'string') return body;
  const out = new Uint8Array(body.length);
  for (let i = 0; i < body.length; i++) out[i] = body.charCodeAt(i);
  return out;
}

/**
 * A claim of the in-memory store as the layer in the same process holds it: a number (the claim's
 * own number and its slot), so that completing or releasing it looks nothing up and allocates
 * nothing. Opaque outside this module.
 * @internal
 */
export type HeldClaim = number;

/**
 * The in-memory store's operations on a held claim, found on the store under {@link HELD_CLAIMS}.
 * Each does what the store's method of the same name does for the claim's key and owner.
 * @internal Used by the idempotency layer.
 */
export interface HeldClaims {
  /** The store's clock: a caller that reads the same one may hand its reading over (`nowMs`). */
  readonly clock: Clock;
  /** As `claim`, answering the held claim instead of null when the key was claimed. */
  claim(key: string, owner: string, request: string, ttlMs: number): IdempotencyRecord | HeldClaim;
  /**
   * As {@link claim} for the owner `${ownerPrefix}${ownerNumber}` and the request `${method} ${path}`,
   * given in parts: the record keeps the parts, and joins them when read. `nowMs`, when given, is
   * {@link clock}'s time now (read by the caller), saving a read. The key comes hashed, with where its
   * characters are read from (the layer's `readIdempotencyKey`).
   */
  claimParts(
    key: HashedKey,
    ownerPrefix: string,
    ownerNumber: number,
    method: string,
    path: string,
    ttlMs: number,
    nowMs?: number,
  ): IdempotencyRecord | HeldClaim;
  complete(claim: HeldClaim, fingerprint: string, response: StoredResponse | null, ttlMs: number): boolean;
  /**
   * As {@link complete} with the fingerprint `${request} ${digest}` (the claim's request), or, when
   * `digest` is a small body's own bytes, `${request} =${base64 of them}` (kept as bytes, encoded on
   * the read that needs it), and the response in parts; `body` null when it was not stored, a string
   * of ASCII characters (each one byte) or bytes, copied into the store. `nowMs` as for {@link claimParts}.
   */
  completeParts(
    claim: HeldClaim,
    digest: string | Uint8Array,
    status: number,
    headers: Record<string, string | string[]>,
    body: Uint8Array | string | null,
    ttlMs: number,
    nowMs?: number,
  ): boolean;
  release(claim: HeldClaim): void;
}

/** Where the in-memory store keeps its {@link HeldClaims}. @internal */
export const HELD_CLAIMS = Symbol('prazo.idempotency.heldClaims');

/** Whether `found` (what {@link HeldClaims.claim} answered) is a held claim, not a record found. @internal */
export function isHeldClaim(found: IdempotencyRecord | HeldClaim): found is HeldClaim {
  return typeof found === 'number';
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
 * Records are not JavaScript objects: each is a slot of a preallocated byte slab ({@link SLOT_BYTES}
 * bytes: key, owner, request, digest, headers and body) under an integer hash table, so holding
 * many costs the collector nothing per record. The slots grow with the records, up to `maxEntries`
 * (≈ 1.1 KiB each). A record whose parts do not fit its slot (a larger response, a character beyond
 * Latin-1 in a scope or a fingerprint) keeps them in one object on the side.
 *
 * @throws {InvalidOptionError} for bad options.
 */
export function createMemoryIdempotencyStore(
  options: MemoryIdempotencyStoreOptions = {},
): MemoryIdempotencyStore {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object', options);
  const maxEntries = options.maxEntries ?? MEMORY_IDEMPOTENCY_STORE_DEFAULTS.maxEntries;
  if (!Number.isInteger(maxEntries) || maxEntries < 1 || maxEntries > MAX_ENTRIES)
    throw new InvalidOptionError('maxEntries', `an integer from 1 to ${MAX_ENTRIES}`, maxEntries);
  const maxBytes = options.maxBytes ?? MEMORY_IDEMPOTENCY_STORE_DEFAULTS.maxBytes;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new InvalidOptionError('maxBytes', 'an integer ≥ 1', maxBytes);
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function') throw new InvalidOptionError('clock', 'a Clock', clock);

  const s = new SlabStore(maxEntries, maxBytes, clock);
  const completeWith = (
    slot: number,
    fingerprint: string,
    response: StoredResponse | null,
    ttlMs: number,
    now: number,
  ): boolean =>
    response === null
      ? s.complete(slot, fingerprint, 0, 0, EMPTY_HEADERS, null, ttlMs, now)
      : s.complete(slot, fingerprint, 0, response.status, response.headers, response.body, ttlMs, now);

  const held: HeldClaims = {
    clock,
    claim: (key, owner, request, ttlMs) => s.claim(hashedKey(key), owner, -1, request, null, ttlMs, s.now()),
    claimParts: (key, ownerPrefix, ownerNumber, method, path, ttlMs, nowMs) =>
      s.claim(key, ownerPrefix, ownerNumber, method, path, ttlMs, s.now(nowMs)),
    complete(claim, fingerprint, response, ttlMs) {
      const now = s.now();
      const slot = s.held(claim, now);
      return slot !== -1 && completeWith(slot, fingerprint, response, ttlMs, now);
    },
    completeParts(claim, digest, status, headers, body, ttlMs, nowMs) {
      const now = s.now(nowMs);
      const slot = s.held(claim, now);
      const kind = typeof digest === 'string' ? 1 : 2;
      return slot !== -1 && s.complete(slot, digest, kind, status, headers, body, ttlMs, now);
    },
    release: (claim) => s.releaseHeld(claim),
  };

  const store: MemoryIdempotencyStore & { [HELD_CLAIMS]: HeldClaims } = {
    [HELD_CLAIMS]: held,
    claim(key, owner, request, ttlMs) {
      const found = s.claim(hashedKey(key), owner, -1, request, null, ttlMs, s.now());
      return typeof found === 'number' ? null : found;
    },
    complete(key, owner, fingerprint, response, ttlMs) {
      const now = s.now();
      const slot = s.live(key, hashKey(key), now);
      return slot !== -1 && s.ownedBy(slot, owner) && completeWith(slot, fingerprint, response, ttlMs, now);
    },
    release(key, owner) {
      const slot = s.find(key);
      if (slot !== -1 && s.ownedBy(slot, owner)) s.remove(slot);
    },
    get(key) {
      const slot = s.live(key, hashKey(key), s.now());
      return slot === -1 ? null : s.record(slot);
    },
    size: () => s.size(),
  };
  return store;
}

/** Most records of one store: a held claim (claim number × maxEntries + slot) stays a safe integer for 2^22 claims. */
const MAX_ENTRIES = 2 ** 31 - 1;

const EMPTY_HEADERS: Record<string, string | string[]> = Object.freeze({});

function sizeOf(headers: Record<string, string | string[]>, body: Uint8Array | string): number {
  let n = typeof body === 'string' ? body.length : body.byteLength;
  for (const name in headers) {
    const value = headers[name]!;
    n += name.length + (typeof value === 'string' ? value.length : value.join('').length);
  }
  return n;
}
