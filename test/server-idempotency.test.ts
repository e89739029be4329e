import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { deadlineMiddleware, idempotencyMiddleware } from '../src/server/express.js';
import {
  createIdempotency,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  withDeadlineHandler,
} from '../src/server/http.js';
import { createFakeClock } from '../src/testing/fake-clock.js';
import { ADAPTERS, Ledger, type OrderService, startOrderService } from './support/idempotent-orders.js';

const open: OrderService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function post(url: string, body: string, key?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { 'content-type': 'text/plain', ...extra };
  if (key !== undefined) headers['idempotency-key'] = key;
  const res = await request(`${url}/orders`, { method: 'POST', body, headers });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe('the idempotency layer and a handler that does not read the body', () => {
  it('fingerprints the whole body all the same: a retry with it replays, another body is refused', async () => {
    const idempotency = createIdempotency();
    let runs = 0;
    const server = createServer(
      withDeadlineHandler(
        (_req, res) => {
          runs++;
          res.writeHead(201, { 'content-type': 'text/plain' });
          res.end(`order ${runs}`);
        },
        { defaultMs: 2_000, maxMs: 5_000, idempotency },
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const first = await post(url, 'two apples', '"unread-1"');
      const again = await post(url, 'two apples', '"unread-1"');
      expect(first).toMatchObject({ status: 201, text: 'order 1' });
      expect(again).toMatchObject({ status: 201, text: 'order 1' });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((await post(url, 'three pears', '"unread-1"')).status).toBe(422);
      // A large body, too (more than one chunk, most of it after the answer).
      const big = 'x'.repeat(200_000);
      expect((await post(url, big, '"unread-2"')).text).toBe('order 2');
      expect((await post(url, big, '"unread-2"')).headers['idempotent-replayed']).toBe('true');
      expect(runs).toBe(2);
    } finally {
      server.close();
    }
  });
});

describe.each(ADAPTERS)('the idempotency layer in the %s adapter', (adapter) => {
  it('runs the first request with a key and replays its response, marked, to a repeat', async () => {
    const ledger = new Ledger();
    const idempotency = createIdempotency();
    const service = await startOrderService({ adapter, idempotency, ledger });
    open.push(service);
    const first = await post(service.url, 'two apples', '"k-1"');
    const again = await post(service.url, 'two apples', '"k-1"');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['x-replica']).toBe('127.0.0.1');
    expect(again.headers['content-type']).toMatch(/application\/json/);
    expect(ledger.orders).toHaveLength(1);
    expect(idempotency.stats()).toMatchObject({ executed: 1, replayed: 1 });
  });

  it.each([
    ['its own in-memory store', () => createMemoryIdempotencyStore()],
    // The store's public methods only: the layer hands it the response as a StoredResponse.
    [
      'a store seen through its public methods',
      () => {
        const inner = createMemoryIdempotencyStore();
        return {
          claim: inner.claim.bind(inner),
          complete: inner.complete.bind(inner),
          release: inner.release.bind(inner),
          get: inner.get.bind(inner),
        };
      },
    ],
  ])('replays a long answer, and one beyond ASCII, byte for byte (%s)', async (_name, makeStore) => {
    const ledger = new Ledger();
    const service = await startOrderService({
      adapter,
      idempotency: createIdempotency({ store: makeStore() }),
      ledger,
    });
    open.push(service);
    // The answer echoes the body: 12 characters of JSON around it, short, long, or with é and ☕.
    for (const [key, body] of [
      ['"short"', 'one'],
      ['"long"', 'pear '.repeat(150)],
      ['"wide"', `café ☕ ${'x'.repeat(40)}`],
    ] as const) {
      const first = await post(service.url, body, key);
      const again = await post(service.url, body, key);
      expect(first.status).toBe(201);
      expect(JSON.parse(first.text).body).toBe(body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    }
    expect(ledger.orders).toHaveLength(3);
  });

  it('refuses the key with another body (422) or path-less garbage key (400), and runs keyless requests', async () => {
    const ledger = new Ledger();
    const idempotency = createIdempotency();
    const service = await startOrderService({ adapter, idempotency, ledger });
    open.push(service);
    await post(service.url, 'two apples', '"k-2"');
    const other = await post(service.url, 'three pears', '"k-2"');
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text).error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const bad = await post(service.url, 'x', '"unterminated');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.code).toBe('IDEMPOTENCY_KEY_INVALID');
    await post(service.url, 'no key');
    await post(service.url, 'no key');
    expect(ledger.orders.map((o) => o.body)).toEqual(['two apples', 'no key', 'no key']);
  });

  it('fingerprints a large body by its digest: the same replays, one byte changed is refused', async () => {
    const ledger = new Ledger();
    const idempotency = createIdempotency();
    const service = await startOrderService({ adapter, idempotency, ledger });
    open.push(service);
    const big = 'x'.repeat(40_000);
    const first = await post(service.url, big, '"k-big"');
    const again = await post(service.url, big, '"k-big"');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await post(service.url, `${big.slice(1)}y`, '"k-big"')).status).toBe(422);
    expect(ledger.orders).toHaveLength(1);
  });

  it('makes a repeat wait for the running first request and answers it with the first response', async () => {
    const ledger = new Ledger();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const idempotency = createIdempotency();
    const service = await startOrderService({ adapter, idempotency, ledger, gate: () => held });
    open.push(service);
    const first = post(service.url, 'a', '"k-3"');
    while (ledger.orders.length === 0) await new Promise((r) => setTimeout(r, 5));
    const repeat = post(service.url, 'a', '"k-3"');
    await new Promise((r) => setTimeout(r, 30));
    release();
    const [a, b] = await Promise.all([first, repeat]);
    expect(b.text).toBe(a.text);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(ledger.orders).toHaveLength(1);
    expect(idempotency.stats().waited).toBe(1);
  });

  it("answers 409 to a repeat while the first runs with concurrent: 'conflict'", async () => {
    const ledger = new Ledger();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const idempotency = createIdempotency({ concurrent: 'conflict' });
    const service = await startOrderService({ adapter, idempotency, ledger, gate: () => held });
    open.push(service);
    const first = post(service.url, 'a', '"k-4"');
    while (ledger.orders.length === 0) await new Promise((r) => setTimeout(r, 5));
    const repeat = await post(service.url, 'a', '"k-4"');
    expect(repeat.status).toBe(409);
    expect(JSON.parse(repeat.text).error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    release();
    expect((await first).status).toBe(201);
  });

  it('releases the key when the answer says the request was not processed (503), so a retry runs', async () => {
    const ledger = new Ledger();
    let calls = 0;
    const idempotency = createIdempotency();
    const service = await startOrderService({
      adapter,
      idempotency,
      ledger,
      status: () => (++calls === 1 ? 503 : 201),
    });
    open.push(service);
    expect((await post(service.url, 'a', '"k-5"')).status).toBe(503);
    // The release is written after the response finished: give it a moment.
    await new Promise((r) => setTimeout(r, 20));
    expect((await post(service.url, 'a', '"k-5"')).status).toBe(201);
    expect(ledger.orders).toHaveLength(2);
  });

  it('scopes keys: two clients with the same key never meet', async () => {
    const ledger = new Ledger();
    const idempotency = createIdempotency({ scope: (req) => String(req.headers['x-client']) });
    const service = await startOrderService({ adapter, idempotency, ledger });
    open.push(service);
    await post(service.url, 'a', '"same"', { 'x-client': 'alice' });
    const bob = await post(service.url, 'a', '"same"', { 'x-client': 'bob' });
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    expect(ledger.orders).toHaveLength(2);
  });
});

describe('Express with the body parser before the layer', () => {
  it('fingerprints the parsed body: the same JSON replays, another is refused', async () => {
    const app = express();
    let orders = 0;
    app.use(deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }), express.json());
    app.use(idempotencyMiddleware(createIdempotency()));
    app.post('/orders', (req, res) => {
      orders++;
      res.status(201).json({ order: orders, item: req.body.item });
    });
    const server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    open.push({ url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const send = (body: string) => post(url, body, '"k-parsed"', { 'content-type': 'application/json' });
    const first = await send('{"item":42}');
    const again = await send('{"item":42}');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await send('{"item":43}')).status).toBe(422);
    expect(orders).toBe(1);
  });
});

describe('a repeat that waits', () => {
  it('stops waiting at its own deadline: the adapter answers 504 and the first still makes one order', async () => {
    const ledger = new Ledger();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const idempotency = createIdempotency();
    const service = await startOrderService({ adapter: 'http', idempotency, ledger, gate: () => held });
    open.push(service);
    const first = post(service.url, 'a', '"k-deadline"');
    while (ledger.orders.length === 0) await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    const repeat = await post(service.url, 'a', '"k-deadline"', {
      'x-deadline-epoch-ms': String(Date.now() + 150),
    });
    expect(repeat.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(1_000);
    release();
    expect((await first).status).toBe(201);
    expect(ledger.orders).toHaveLength(1);
  });
});

describe('a keyed request whose client goes away', () => {
  it('runs on instead of being cancelled, so that the retry after a read timeout gets its order', async () => {
    // The handler's own work honours the deadline's signal, as a call passed `req.deadline` does;
    // the order is made once that work has succeeded.
    const signals: Array<{ key: string | undefined; signal: AbortSignal }> = [];
    let orders = 0;
    let proceed!: () => void;
    const held = new Promise<void>((resolve) => {
      proceed = resolve;
    });
    const idempotency = createIdempotency();
    const server = createServer(
      withDeadlineHandler(
        async (req, res) => {
          for await (const _ of req);
          const { signal } = req.deadline;
          signals.push({ key: req.headers['idempotency-key'] as string | undefined, signal });
          try {
            await new Promise<void>((resolve, reject) => {
              signal.addEventListener('abort', () => reject(signal.reason), { once: true });
              held.then(resolve);
            });
          } catch {
            res.writeHead(502).end('cancelled');
            return;
          }
          orders++;
          res.writeHead(201, { 'content-type': 'text/plain' });
          res.end(`order ${orders}`);
        },
        { defaultMs: 2_000, maxMs: 5_000, idempotency },
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gone = async (key?: string) => {
      const client = new AbortController();
      const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
      const pending = request(`${url}/orders`, { method: 'POST', body: 'a', headers, signal: client.signal });
      while (signals.length === 0 || signals[signals.length - 1]!.key !== key)
        await new Promise((r) => setTimeout(r, 5));
      client.abort();
      await pending.catch(() => {});
      return signals[signals.length - 1]!.signal;
    };
    try {
      // Without a key the handler is cancelled as before.
      const keyless = await gone();
      while (!keyless.aborted) await new Promise((r) => setTimeout(r, 5));
      expect((keyless.reason as { code?: string }).code).toBe('CANCELLED');
      // With a key it runs on; the retry waits for it and gets its order.
      const keyed = await gone('"k-gone"');
      const retry = post(url, 'a', '"k-gone"');
      await new Promise((r) => setTimeout(r, 50));
      expect(keyed.aborted).toBe(false);
      proceed();
      expect(await retry).toMatchObject({ status: 201, text: 'order 1' });
      expect(orders).toBe(1);
      expect(idempotency.stats()).toMatchObject({ executed: 1, waited: 1 });
    } finally {
      proceed();
      server.close();
    }
  });
});

describe('the in-memory store', () => {
  it('holds at most maxEntries records, evicting the oldest', async () => {
    const store = createMemoryIdempotencyStore({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) expect(await store.claim(key, 'o', 'POST /', 60_000)).toBeNull();
    expect(store.size()).toMatchObject({ entries: 2, evicted: 1 });
    expect(await store.get('a')).toBeNull();
    expect(await store.get('c')).toMatchObject({ state: 'running' });
  });

  it('evicts by write order: a completed record counts from its completion, a stale copy evicts nothing', async () => {
    const store = createMemoryIdempotencyStore({ maxEntries: 2 });
    const response = { status: 201, headers: {}, body: Buffer.from('ok') };
    await store.claim('a', 'o', 'POST /', 60_000);
    await store.claim('b', 'o', 'POST /', 60_000);
    expect(await store.complete('a', 'o', 'f', response, 60_000)).toBe(true); // a is now the newest
    await store.claim('c', 'o', 'POST /', 60_000); // evicts b, the least recently written
    expect(await store.get('b')).toBeNull();
    expect(await store.get('a')).toMatchObject({ state: 'done' });
    expect(await store.get('c')).toMatchObject({ state: 'running' });
    for (let i = 0; i < 5_000; i++) await store.claim(`k${i}`, 'o', 'POST /', 60_000);
    expect(store.size()).toMatchObject({ entries: 2 });
    expect(await store.get('k4999')).toMatchObject({ state: 'running' });
    expect(await store.get('k4998')).toMatchObject({ state: 'running' });
  });

  it('holds at most maxBytes of responses', async () => {
    const store = createMemoryIdempotencyStore({ maxBytes: 2_000 });
    const response = { status: 200, headers: {}, body: Buffer.alloc(900) };
    for (const key of ['a', 'b', 'c']) {
      await store.claim(key, 'o', 'POST /', 60_000);
      await store.complete(key, 'o', 'f', response, 60_000);
    }
    expect(store.size().bytes).toBeLessThanOrEqual(2_000);
    expect(await store.get('c')).toMatchObject({ state: 'done' });
  });

  it('forgets a record at its expiry and stores a response only for its owner', async () => {
    let now = 1_000;
    const clock = { now: () => now, setTimeout, clearTimeout } as never;
    const store = createMemoryIdempotencyStore({ clock });
    await store.claim('k', 'owner-1', 'POST /', 100);
    expect(await store.complete('k', 'someone-else', 'f', null, 100)).toBe(false);
    now += 100;
    expect(await store.get('k')).toBeNull();
    expect(await store.claim('k', 'owner-2', 'POST /', 100)).toBeNull();
    expect(await store.complete('k', 'owner-1', 'f', null, 100)).toBe(false);
  });
});

describe('a store that fails', () => {
  /** A store whose claims wait for the test to settle them. */
  function stalledStore() {
    const claims: { settle: (r: null) => void; fail: (e: Error) => void }[] = [];
    const released: string[] = [];
    const store = {
      claim: () =>
        new Promise<null>((resolve, reject) => {
          claims.push({ settle: resolve, fail: reject });
        }),
      complete: () => Promise.resolve(true),
      release: (_key: string, owner: string) => {
        released.push(owner);
        return Promise.resolve();
      },
      get: () => Promise.resolve(null),
    };
    return { store, claims, released };
  }

  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  }

  it('fails closed after storeTimeoutMs with 503 + Retry-After, and gives back a claim that lands late', async () => {
    const clock = createFakeClock(Date.now());
    const { store, claims, released } = stalledStore();
    const ledger = new Ledger();
    const idempotency = createIdempotency({ store, clock, retryAfterSeconds: 2 });
    const service = await startOrderService({ adapter: 'http', idempotency, ledger });
    open.push(service);
    const answer = post(service.url, 'a', '"k-stalled"');
    await until(() => claims.length === 1);
    clock.advance(250);
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(JSON.parse(res.text).error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(ledger.orders).toHaveLength(0);
    claims[0]!.settle(null);
    await until(() => released.length === 1);
    expect(released).toHaveLength(1);
    expect(idempotency.stats()).toMatchObject({ storeErrors: 1, failedClosed: 1 });
  });

  it('fails open: runs the request without deduplication, and counts it', async () => {
    const { store, claims } = stalledStore();
    const ledger = new Ledger();
    const failures: unknown[] = [];
    const idempotency = createIdempotency({
      store,
      onStoreError: 'open',
      onStoreFailure: (e) => failures.push(e),
    });
    const service = await startOrderService({ adapter: 'fastify', idempotency, ledger });
    open.push(service);
    const answer = post(service.url, 'a', '"k-open"');
    await until(() => claims.length === 1);
    claims[0]!.fail(new Error('connection refused'));
    expect((await answer).status).toBe(201);
    expect(ledger.orders).toHaveLength(1);
    expect(failures).toHaveLength(1);
    expect(idempotency.stats()).toMatchObject({ storeErrors: 1, failedOpen: 1 });
  });

  it('refuses unusable options, naming them', () => {
    expect(() => createIdempotency({ concurrent: 'queue' as never })).toThrow(/concurrent/);
    expect(() => createIdempotency({ onStoreError: 'maybe' as never })).toThrow(/onStoreError/);
    expect(() => createIdempotency({ store: {} as never })).toThrow(/store/);
    expect(() => createIdempotency({ graceMs: -1 })).toThrow(/graceMs/);
    expect(() => createIdempotency({ methods: ['PO ST'] })).toThrow(/methods/);
    expect(() => createRedisIdempotencyStore({ client: {} as never })).toThrow(/client/);
    expect(() => createMemoryIdempotencyStore({ maxEntries: 0 })).toThrow(/maxEntries/);
  });
});

describe('the wrappers the layer installs', () => {
  it('are the same functions on every keyed request (no closure per request) and absent without a key', async () => {
    const seen: { push: unknown; writeHead: unknown; write: unknown; end: unknown; own: boolean }[] = [];
    const server = createServer(
      withDeadlineHandler(
        async (req, res) => {
          for await (const _ of req);
          seen.push({
            push: req.push,
            writeHead: res.writeHead,
            write: res.write,
            end: res.end,
            own: Object.hasOwn(res, 'end'),
          });
          res.writeHead(201, { 'content-type': 'text/plain' });
          res.end('made');
        },
        { defaultMs: 1000, maxMs: 5000, idempotency: createIdempotency() },
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await post(url, 'one', '"w-1"')).status).toBe(201);
      expect((await post(url, 'two', '"w-2"')).status).toBe(201);
      expect((await post(url, 'three')).status).toBe(201);
      const [first, second, keyless] = seen;
      expect(first!.own).toBe(true);
      for (const name of ['push', 'writeHead', 'write', 'end'] as const)
        expect(second![name], name).toBe(first![name]);
      expect(keyless!.own).toBe(false);
      expect(keyless!.end).not.toBe(first!.end);
    } finally {
      server.close();
    }
  });
});

describe('two layers on one request', () => {
  it('both store the response the handler wrote once, and either replays it', async () => {
    const app = express();
    let orders = 0;
    const outer = createIdempotency();
    const inner = createIdempotency();
    app.use(deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }));
    app.use(idempotencyMiddleware(outer), idempotencyMiddleware(inner), express.text());
    app.post('/orders', (_req, res) => {
      orders++;
      res.status(201).json({ order: orders });
    });
    const server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    open.push({ url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const first = await post(url, 'one', '"two-layers"');
    const again = await post(url, 'one', '"two-layers"');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(orders).toBe(1);
    expect(outer.stats()).toMatchObject({ executed: 1, replayed: 1 });
    expect(inner.stats()).toMatchObject({ executed: 1 });
  });
});
