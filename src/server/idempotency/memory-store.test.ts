import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { hashKey } from '../../wire/key-hash.js';
import type { IdempotencyRecord } from './idempotency-store.js';
import {
  createMemoryIdempotencyStore,
  HELD_CLAIMS,
  type HeldClaims,
  isHeldClaim,
  SLOT_BYTES,
} from './memory-store.js';

const RESPONSE = { status: 201, headers: { 'content-type': 'text/plain' }, body: new Uint8Array([111, 107]) };

describe('the in-memory store: expiry, in-place completion, bounds', () => {
  it('expires a record at its lifetime on read (no timer): an expired done record is not replayed', () => {
    // A clock far from zero: expiries are kept relative to the store's creation.
    const clock = createFakeClock(1_764_000_000_000);
    const store = createMemoryIdempotencyStore({ clock });
    expect(store.claim('k', 'o1', 'POST /orders', 1_000)).toBeNull();
    clock.advance(400);
    expect(store.complete('k', 'o1', 'POST /orders =b', RESPONSE, 1_000)).toBe(true);
    clock.advance(999); // 1 ms before the completed record's expiry (it counts from its completion)
    expect(store.get('k')).toMatchObject({ state: 'done', fingerprint: 'POST /orders =b' });
    clock.advance(1);
    expect(store.get('k')).toBeNull();
    // The key is free again: a new claim runs rather than a replay.
    expect(store.claim('k', 'o2', 'POST /orders', 1_000)).toBeNull();
    expect(store.get('k')).toMatchObject({ state: 'running', owner: 'o2' });
    expect(store.size()).toMatchObject({ entries: 1, evicted: 0 });
  });

  it('answers records as they were when read: completing later does not change a record already handed out', () => {
    const store = createMemoryIdempotencyStore({ clock: createFakeClock(5) });
    store.claim('k', 'o', 'POST /orders', 60_000);
    const running = store.get('k');
    expect(store.claim('k', 'other', 'POST /orders', 60_000)).toEqual({
      state: 'running',
      owner: 'o',
      request: 'POST /orders',
    });
    store.complete('k', 'o', 'POST /orders =b', RESPONSE, 60_000);
    expect(running).toEqual({ state: 'running', owner: 'o', request: 'POST /orders' });
    expect(store.get('k')).toEqual({
      state: 'done',
      owner: 'o',
      request: 'POST /orders',
      fingerprint: 'POST /orders =b',
      response: RESPONSE,
    });
    // Stored once: a second completion (by anyone) changes nothing.
    expect(store.complete('k', 'o', 'POST /orders =c', null, 60_000)).toBe(false);
    expect(store.get('k')).toMatchObject({ fingerprint: 'POST /orders =b', response: RESPONSE });
  });

  it('shares equal header sets between records, and hands every reader headers of its own', () => {
    const store = createMemoryIdempotencyStore({ clock: createFakeClock(0) });
    const sets: Record<string, string | string[]>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] },
      { 'content-type': 'application/json', etag: '"v1"' },
      // The names of the first set in another order: another set (a replay keeps the order).
      { etag: '"v1"', 'content-type': 'application/json' },
    ];
    // Alternating, repeating and new sets, beyond the number shared (later ones go into their slots).
    const order = [0, 0, 1, 0, 1, 2, 3, 2, 0, ...Array.from({ length: 70 }, (_, i) => 4 + i), 1, 0];
    const all = [...sets, ...Array.from({ length: 70 }, (_, i) => ({ location: `/orders/${i}` }))];
    order.forEach((set, i) => {
      store.claim(`k${i}`, 'o', 'POST /orders', 60_000);
      const headers = all[set]!;
      expect(
        store.complete(`k${i}`, 'o', 'f', { status: 201, headers, body: new Uint8Array([i]) }, 60_000),
      ).toBe(true);
    });
    /** The stored headers of `key`'s done record, as a reader gets them. */
    const headersOf = (key: string): Record<string, string | string[]> => {
      const read = store.get(key) as IdempotencyRecord | null;
      if (read?.state !== 'done' || read.response === null)
        throw new Error(`${key} is not done with a response`);
      return read.response.headers;
    };
    order.forEach((set, i) => {
      const headers = headersOf(`k${i}`);
      expect(headers).toEqual(all[set]);
      expect(Object.keys(headers)).toEqual(Object.keys(all[set]!));
      // A reader that changes what it got changes nothing stored.
      headers['content-type'] = 'changed';
      const cookies = headers['set-cookie'];
      if (Array.isArray(cookies)) cookies.push('c=3');
    });
    for (const [i, set] of order.entries()) expect(headersOf(`k${i}`)).toEqual(all[set]);
    // What the caller passed is not kept either.
    (sets[1]!['set-cookie'] as string[]).push('d=4');
    expect(headersOf('k2')['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('keeps a response too large to replay as a done record without a response', () => {
    const store = createMemoryIdempotencyStore({ clock: createFakeClock(0) });
    store.claim('k', 'o', 'POST /', 60_000);
    expect(store.complete('k', 'o', 'POST / =', null, 60_000)).toBe(true);
    expect(store.get('k')).toEqual({
      state: 'done',
      owner: 'o',
      request: 'POST /',
      fingerprint: 'POST / =',
      response: null,
    });
  });

  it('a released or expired record leaves no live copy in the write order: it evicts nobody and is not evicted twice', () => {
    const clock = createFakeClock(0);
    const store = createMemoryIdempotencyStore({ maxEntries: 2, clock });
    store.claim('a', 'o1', 'POST /', 60_000);
    store.claim('b', 'o1', 'POST /', 60_000);
    store.release('a', 'o1');
    store.claim('a', 'o2', 'POST /', 60_000); // the same key, a new record, written after b
    store.claim('c', 'o1', 'POST /', 60_000); // evicts b: the first copy of a is stale
    expect(store.get('a')).toMatchObject({ owner: 'o2' });
    expect(store.get('b')).toBeNull();
    expect(store.get('c')).toMatchObject({ state: 'running' });
    expect(store.size()).toMatchObject({ entries: 2, evicted: 1 });
    // An expired record is swept or evicted without counting as an eviction before its expiry.
    store.claim('d', 'o1', 'POST /', 10);
    clock.advance(10);
    store.claim('e', 'o1', 'POST /', 60_000);
    store.claim('f', 'o1', 'POST /', 60_000);
    expect(store.get('d')).toBeNull();
    expect(store.size().entries).toBe(2);
  });

  it('stays bounded in records whatever the order of claims, completions, releases and time', () => {
    type Op =
      | { kind: 'claim' | 'complete' | 'release' | 'get'; key: number; ttl: number }
      | { kind: 'tick'; ms: number };
    const op = fc.oneof(
      fc.record({
        kind: fc.constantFrom('claim' as const, 'complete' as const, 'release' as const, 'get' as const),
        key: fc.integer({ min: 0, max: 40 }),
        ttl: fc.integer({ min: 1, max: 500 }),
      }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 300 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(op, { maxLength: 300 }),
        (maxEntries, ops: Op[]) => {
          const clock = createFakeClock(1_700_000_000_000);
          const store = createMemoryIdempotencyStore({ maxEntries, clock });
          // What the store must answer, kept the simple way: key → owner, done, expiry (epoch ms).
          const model = new Map<string, { owner: string; done: boolean; expiresAt: number }>();
          let owners = 0;
          for (const o of ops) {
            if (o.kind === 'tick') {
              clock.advance(o.ms);
              continue;
            }
            const key = `k${o.key}`;
            const now = clock.now();
            const known = model.get(key);
            const live = known !== undefined && known.expiresAt > now ? known : undefined;
            const stored = store.get(key);
            // The store may have evicted a live record early (bounded), never kept an expired one.
            if (live === undefined) expect(stored).toBeNull();
            else if (stored !== null)
              expect(stored).toMatchObject({ owner: live.owner, state: live.done ? 'done' : 'running' });
            if (stored === null) model.delete(key);
            const current = stored === null ? undefined : live;
            if (o.kind === 'claim') {
              const owner = `o${++owners}`;
              const found = store.claim(key, owner, 'POST /', o.ttl);
              expect(found === null).toBe(current === undefined);
              if (found === null) model.set(key, { owner, done: false, expiresAt: now + o.ttl });
            } else if (o.kind === 'complete' && current !== undefined) {
              const ok = store.complete(key, current.owner, 'POST / =', RESPONSE, o.ttl);
              expect(ok).toBe(!current.done);
              if (ok) model.set(key, { ...current, done: true, expiresAt: now + o.ttl });
            } else if (o.kind === 'release' && current !== undefined) {
              store.release(key, current.owner);
              model.delete(key);
            }
            expect(store.size().entries).toBeLessThanOrEqual(maxEntries);
          }
        },
      ),
    );
  });

  it('a held claim (the layer in this process) completes and releases only its own record, as claim and complete by key do', () => {
    const clock = createFakeClock(1_764_000_000_000);
    const store = createMemoryIdempotencyStore({ clock });
    const held = (store as unknown as { [HELD_CLAIMS]: HeldClaims })[HELD_CLAIMS];
    const first = held.claim('k', 'o1', 'POST /', 100);
    if (!isHeldClaim(first)) throw new Error('a fresh key gives a held claim');
    // A repeat finds the record, not a claim.
    const found = held.claim('k', 'o2', 'POST /', 100);
    expect(isHeldClaim(found)).toBe(false);
    expect(found).toEqual({ state: 'running', owner: 'o1', request: 'POST /' });
    expect(held.complete(first, 'POST / =a', RESPONSE, 100)).toBe(true);
    expect(held.complete(first, 'POST / =b', RESPONSE, 100)).toBe(false); // stored once
    expect(store.get('k')).toMatchObject({ state: 'done', owner: 'o1', fingerprint: 'POST / =a' });
    // Released, then claimed again by another: the old claim neither completes nor releases the new record.
    held.release(first);
    expect(store.get('k')).toBeNull();
    const second = held.claim('k', 'o3', 'POST /', 100);
    expect(held.complete(first, 'POST / =old', null, 100)).toBe(false);
    held.release(first);
    expect(store.get('k')).toEqual({ state: 'running', owner: 'o3', request: 'POST /' });
    // Expired: its completion is refused and the record goes.
    clock.advance(100);
    expect(held.complete(second as never, 'POST / =late', RESPONSE, 100)).toBe(false);
    expect(store.size().entries).toBe(0);
    expect(store.claim('k', 'o4', 'POST /', 100)).toBeNull();
  });
});

describe('the in-memory store against a model: its slab, hash table and write order', () => {
  it('keeps a record that fills its slot to the last byte, and one a byte over on the side, each intact beside its neighbour', () => {
    // Record a's parts: key 'a', owner 'o', request 'POST /', fingerprint 'f', no headers: 9 bytes before its body.
    for (let over = -2; over <= 2; over++) {
      const store = createMemoryIdempotencyStore({ clock: createFakeClock(0) });
      store.claim('a', 'o', 'POST /', 60_000);
      store.claim('b', 'p', 'POST /b', 60_000); // the next slot
      const body = Uint8Array.from({ length: SLOT_BYTES - 9 + over }, (_, i) => i & 0xff);
      expect(store.complete('a', 'o', 'f', { status: 200, headers: {}, body }, 60_000)).toBe(true);
      expect(store.get('a')).toEqual({
        state: 'done',
        owner: 'o',
        request: 'POST /',
        fingerprint: 'f',
        response: { status: 200, headers: {}, body },
      });
      expect(store.get('b')).toEqual({ state: 'running', owner: 'p', request: 'POST /b' });
    }
  });

  /** A record as the model keeps it: JavaScript values, a Map in write order (a write moves it to the end). */
  interface ModelRecord {
    claim: number;
    owner: string;
    request: string;
    done: boolean;
    fingerprint: string;
    response: { status: number; headers: Record<string, string | string[]>; body: Uint8Array } | null;
    expiresAt: number;
    bytes: number;
  }
  const KEYS = [
    ...Array.from({ length: 40 }, (_, i) => `k${i}`),
    'x'.repeat(300), // a long key: with a long path, past the slot
    // Keys as prazo's client mints them (36 characters, a slice of the header value), and two as long beyond ASCII.
    '0b7c9e52-3f1d-4c8a-9e27-5d6f1a2b3c4d',
    'f3a1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    `${'u'.repeat(35)}\u00e9`,
    `${'w'.repeat(35)}\u20ac`,
    'scope-é\u0000key', // Latin-1 beyond ASCII: still in the slab
    'scope-ключ\u0000key', // beyond Latin-1: on the side
  ];
  // More paths than the store interns (16), and one longer than it interns (128): those go into the slab.
  const PATHS = [
    '/orders',
    '/orders?id=1',
    `/${'p'.repeat(900)}`,
    '/caf\u00e9',
    '/\u20ac',
    ...Array.from({ length: 20 }, (_, i) => `/orders/${i}`),
  ];
  const HEADERS: Record<string, string | string[]>[] = [
    {},
    { 'content-type': 'application/json' },
    { 'set-cookie': ['a=1', 'b=2'], location: '/orders/1' },
    { 'x-single': ['only'] },
    { 'x-wide': 'caf\u00e9 \u20ac' },
    { 'x-long': 'v'.repeat(2_000) },
  ];
  const bodyOf = (size: number, seed: number): Uint8Array =>
    Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);
  const sizeOf = (headers: Record<string, string | string[]>, body: Uint8Array): number => {
    let n = body.length;
    for (const [name, value] of Object.entries(headers))
      n += name.length + (typeof value === 'string' ? value.length : value.join('').length);
    return n;
  };

  type Op =
    | { kind: 'claim' | 'claimParts'; key: number; path: number; ttl: number; owner: number }
    | {
        kind: 'complete' | 'completeHeld';
        key: number;
        claim: number;
        headers: number;
        body: number;
        ascii: boolean;
        stored: boolean;
        inline: boolean;
        ttl: number;
        wrongOwner: boolean;
      }
    | { kind: 'release' | 'releaseHeld' | 'get'; key: number; claim: number }
    | { kind: 'tick'; ms: number };
  const index = fc.integer({ min: 0, max: 1_000 });
  const ttl = fc.integer({ min: 1, max: 400 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constantFrom('claim' as const, 'claimParts' as const),
      key: index,
      path: index,
      ttl,
      owner: fc.integer({ min: 0, max: 2 }),
    }),
    fc.record({
      kind: fc.constantFrom('complete' as const, 'completeHeld' as const),
      key: index,
      claim: index,
      headers: index,
      body: fc.constantFrom(0, 2, 24, 300, 700, 1_100),
      ascii: fc.boolean(),
      stored: fc.boolean(),
      inline: fc.boolean(),
      ttl,
      wrongOwner: fc.boolean(),
    }),
    fc.record({
      kind: fc.constantFrom('release' as const, 'releaseHeld' as const, 'get' as const),
      key: index,
      claim: index,
    }),
    fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 250 }) }),
  );

  it('answers every operation as a Map of records in write order does, bounds and expiry included', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 17, max: 40 })),
        fc.constantFrom(600, 4_000, 64 * 1024 * 1024),
        fc.integer({ min: 1, max: 40 }),
        fc.array(op, { minLength: 50, maxLength: 400, size: 'max' }),
        (maxEntries, maxBytes, keyCount, ops) => {
          const clock = createFakeClock(1_764_000_000_000);
          const store = createMemoryIdempotencyStore({ maxEntries, maxBytes, clock });
          const held = (store as unknown as { [HELD_CLAIMS]: HeldClaims })[HELD_CLAIMS];
          const model = new Map<string, ModelRecord>();
          let bytes = 0;
          let evicted = 0;
          let claims = 0;
          // Every claim made: its key, its owner, the model's claim number, and the store's held claim.
          const made: { key: string; owner: string; claim: number; held: number | undefined }[] = [];
          const keys = [...KEYS.slice(0, keyCount), ...KEYS.slice(40)];

          const drop = (key: string): void => {
            bytes -= model.get(key)!.bytes;
            model.delete(key);
          };
          const live = (key: string, now: number): ModelRecord | undefined => {
            const record = model.get(key);
            if (record !== undefined && record.expiresAt <= now) {
              drop(key);
              return undefined;
            }
            return record;
          };
          const settle = (now: number): void => {
            while ((model.size > maxEntries || bytes > maxBytes) && model.size > 0) {
              const [oldest, record] = model.entries().next().value!;
              if (record.expiresAt > now) evicted++;
              drop(oldest);
            }
            for (let swept = 0; swept < 4; swept++) {
              const first = model.entries().next();
              if (first.done || first.value[1].expiresAt > now) break;
              drop(first.value[0]);
            }
          };
          const seen = (record: ModelRecord) =>
            record.done
              ? {
                  state: 'done',
                  owner: record.owner,
                  request: record.request,
                  fingerprint: record.fingerprint,
                  response:
                    record.response === null
                      ? null
                      : { ...record.response, headers: { ...record.response.headers } },
                }
              : { state: 'running', owner: record.owner, request: record.request };

          for (const o of ops) {
            const now = clock.now();
            if (o.kind === 'tick') {
              clock.advance(o.ms);
              continue;
            }
            const key = keys[o.key % keys.length]!;
            if (o.kind === 'claim' || o.kind === 'claimParts') {
              const path = PATHS[o.path % PATHS.length]!;
              const number = claims + 1;
              const prefix = ['owner-', 'own\u00e9r-', 'ow\u20acner-'][o.owner]!;
              const owner = `${prefix}${number}`;
              const found =
                o.kind === 'claim'
                  ? store.claim(key, owner, `POST ${path}`, o.ttl)
                  : // The key read from inside a longer text, as the layer hands over a header value's slice.
                    held.claimParts(
                      { key, hash: hashKey(key), text: `"${key}";x`, from: 1 },
                      prefix,
                      number,
                      'POST',
                      path,
                      o.ttl,
                    );
              const existing = live(key, now);
              if (existing !== undefined) {
                expect(found).toEqual(seen(existing));
                continue;
              }
              expect(found === null || isHeldClaim(found as never)).toBe(true);
              claims = number;
              model.set(key, {
                claim: number,
                owner,
                request: `POST ${path}`,
                done: false,
                fingerprint: '',
                response: null,
                expiresAt: now + o.ttl,
                bytes: 64 + key.length,
              });
              bytes += 64 + key.length;
              made.push({ key, owner, claim: number, held: found === null ? undefined : (found as number) });
              settle(now);
            } else if (o.kind === 'complete' || o.kind === 'completeHeld') {
              const c = made[o.claim % Math.max(made.length, 1)];
              if (c === undefined) continue;
              const body = bodyOf(o.body, o.claim);
              const asString = o.ascii ? String.fromCharCode(...body.map((b) => b & 0x7f)) : undefined;
              const stored =
                asString === undefined ? body : Uint8Array.from(asString, (ch) => ch.charCodeAt(0));
              const headers = HEADERS[o.headers % HEADERS.length]!;
              // A small body's own bytes (kept as bytes), or a digest string (beyond ASCII: on the side).
              const small = bodyOf(o.body % 300, 7);
              const digest = o.inline ? Buffer.from(small).toString('base64') : 'sha-\u00e9';
              let ok: boolean;
              let record = model.get(c.key);
              if (o.kind === 'completeHeld' && c.held !== undefined) {
                ok = held.completeParts(
                  c.held,
                  o.inline ? small : digest,
                  201,
                  headers,
                  o.stored ? (asString ?? body) : null,
                  o.ttl,
                );
                if (record !== undefined && record.claim === c.claim && record.expiresAt <= now) {
                  drop(c.key);
                  record = undefined;
                }
                if (record?.claim !== c.claim) record = undefined;
              } else {
                const owner = o.wrongOwner ? `${c.owner}x` : c.owner;
                const fingerprint = `POST /orders ${digest}`;
                ok = store.complete(
                  c.key,
                  owner,
                  fingerprint,
                  o.stored ? { status: 201, headers, body } : null,
                  o.ttl,
                ) as boolean;
                record = live(c.key, now);
                if (record?.owner !== owner) record = undefined;
              }
              const expected = record !== undefined && !record.done;
              expect(ok).toBe(expected);
              if (!expected) continue;
              const r = record!;
              const bodyKept = o.kind === 'completeHeld' && c.held !== undefined ? stored : body;
              bytes -= r.bytes;
              r.done = true;
              r.fingerprint =
                o.kind === 'completeHeld' && c.held !== undefined
                  ? `${r.request} ${o.inline ? '=' : ''}${digest}`
                  : `POST /orders ${digest}`;
              r.response = o.stored ? { status: 201, headers, body: bodyKept } : null;
              r.expiresAt = now + o.ttl;
              r.bytes = 128 + c.key.length + (o.stored ? sizeOf(headers, bodyKept) : 0);
              bytes += r.bytes;
              model.delete(c.key);
              model.set(c.key, r);
              settle(now);
            } else if (o.kind === 'release' || o.kind === 'releaseHeld') {
              const c = made[o.claim % Math.max(made.length, 1)];
              if (c === undefined) continue;
              if (o.kind === 'releaseHeld' && c.held !== undefined) held.release(c.held);
              else store.release(c.key, c.owner);
              if (model.get(c.key)?.claim === c.claim) drop(c.key);
            } else {
              const record = live(key, now);
              expect(store.get(key)).toEqual(record === undefined ? null : seen(record));
            }
            expect(store.size()).toEqual({ entries: model.size, bytes, evicted });
          }
          const now = clock.now();
          for (const key of keys) {
            const record = live(key, now);
            expect(store.get(key)).toEqual(record === undefined ? null : seen(record));
          }
          expect(store.size()).toEqual({ entries: model.size, bytes, evicted });
        },
      ),
      { numRuns: 100 },
    );
  });
});
