import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createMemoryIdempotencyStore, HELD_CLAIMS, type HeldClaims, isHeldClaim } from './memory-store.js';

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
