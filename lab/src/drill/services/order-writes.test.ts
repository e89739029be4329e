import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createFakeClock, type FakeClock } from 'prazo';
import { createIdempotency, createMemoryIdempotencyStore, REPLAYED_HEADER } from 'prazo/http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Behaviour, parseBehaviour } from '../../behaviour.js';
import { startDouble } from '../../double.js';
import { createRandom } from '../../random.js';
import { undici } from '../../undici.js';
import {
  checkoutOf,
  createOrderBook,
  createOrderWriteRoute,
  type OrderBook,
  type OrderWriteRoute,
  orderWriteFigures,
} from './order-writes.js';
import { findRedisServer } from './redis.js';

describe('counting the order writes', () => {
  it('counts an order created again on another instance as a duplicate side effect', () => {
    const figures = orderWriteFigures(
      [
        [
          ['c-1', 1],
          ['c-2', 2],
        ],
        [
          ['c-1', 1],
          ['c-3', 1],
        ],
        [['c-2', 1]],
      ],
      { sent: 4, succeeded: 3 },
    );
    // c-1 twice (two instances), c-2 three times (one instance twice, another once), c-3 once.
    expect(figures).toEqual({
      created: 6,
      checkouts: 3,
      duplicates: 3,
      checkoutsWithDuplicates: 2,
      sent: 4,
      succeeded: 3,
    });
  });

  it('counts nothing twice when every checkout has one order, and zero without orders', () => {
    expect(orderWriteFigures([[['a', 1]], [['b', 1]], []], { sent: 3, succeeded: 2 })).toMatchObject({
      created: 2,
      duplicates: 0,
      checkoutsWithDuplicates: 0,
    });
    expect(orderWriteFigures([], { sent: 0, succeeded: 0 })).toMatchObject({ created: 0, duplicates: 0 });
  });

  it('an order book hands over what was created since it was last read, then starts over', () => {
    const book = createOrderBook();
    book.record('a');
    book.record('a');
    book.record('b');
    expect(book.take()).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(book.take()).toEqual([]);
    book.record('a');
    expect(book.take()).toEqual([['a', 1]]);
  });

  it('reads the checkout id of a write body, and refuses anything else', () => {
    expect(checkoutOf(Buffer.from('{"checkout":"naive-7"}'))).toBe('naive-7');
    for (const bad of [
      '',
      'x',
      '{}',
      '{"checkout":""}',
      '{"checkout":7}',
      'null',
      `{"checkout":"${'x'.repeat(201)}"}`,
    ])
      expect(checkoutOf(Buffer.from(bad))).toBeNull();
  });
});

describe('the supplier’s order write route (real server, fake clock)', () => {
  let server: Server | undefined;
  let route: OrderWriteRoute | undefined;
  let pool: InstanceType<typeof undici.Pool> | undefined;
  afterEach(async () => {
    route?.close();
    await pool?.destroy();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    server = undefined;
    route = undefined;
    pool = undefined;
  });

  async function start(behaviour: Behaviour, clock: FakeClock, book: OrderBook, keyed = false) {
    route = createOrderWriteRoute({
      behaviour: () => behaviour,
      random: createRandom(3),
      book,
      clock,
      ...(keyed
        ? {
            idempotency: createIdempotency({ store: createMemoryIdempotencyStore(), clock }),
            deadlineMs: 60_000,
          }
        : {}),
    });
    const r = route;
    server = createServer((req, res) => {
      if (!r.route(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = new undici.Pool(origin);
    const p = pool;
    return (checkout: string, key?: string) =>
      p.request({
        method: 'POST',
        path: '/orders',
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': `"${key}"` } : {}) },
        body: JSON.stringify({ checkout }),
      });
  }

  /** Waits (real time, a few ms) until `predicate` holds: the server has read the body. */
  async function until(predicate: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(predicate()).toBe(true);
  }

  it('creates the order when the write arrives, before its answer: an answer lost afterwards leaves the order', async () => {
    const clock = createFakeClock(1_000);
    const book = createOrderBook();
    const created: string[] = [];
    const spy: OrderBook = {
      record: (c) => {
        created.push(c);
        book.record(c);
      },
      take: () => book.take(),
    };
    const post = await start(parseBehaviour({ answerAtMs: 500 }), clock, spy);
    const pending = post('c-1');
    await until(() => created.length === 1);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(500);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ order: 'c-1' });
    // A blind retry of the same write (no key) creates the order again.
    clock.advance(0);
    const again = post('c-1');
    await until(() => created.length === 2);
    clock.advance(500);
    expect((await again).statusCode).toBe(200);
    expect(book.take()).toEqual([['c-1', 2]]);
  });

  it('a 503 of the instance is not written; a malformed body is refused with 400', async () => {
    const clock = createFakeClock(1_000);
    const book = createOrderBook();
    const post = await start(
      parseBehaviour({ latency: { type: 'fixed', ms: 10 }, statuses: [{ status: 503, share: 1 }] }),
      clock,
      book,
    );
    const pending = post('c-1');
    await until(() => clock.pendingTimers() === 1);
    clock.advance(10);
    const refused = await pending;
    expect(refused.statusCode).toBe(503);
    await refused.body.text();
    const bad = await pool!.request({ method: 'POST', path: '/orders', body: '{"nope":1}' });
    expect(bad.statusCode).toBe(400);
    await bad.body.text();
    expect(book.take()).toEqual([]);
  });

  it('with the idempotency layer a repeat of the keyed write is replayed, not written again', async () => {
    const clock = createFakeClock(1_000);
    const book = createOrderBook();
    const post = await start(parseBehaviour({ latency: { type: 'fixed', ms: 20 } }), clock, book, true);
    const first = post('c-9', 'k-1');
    await until(() => clock.pendingTimers() >= 1);
    clock.advance(20);
    const answered = await first;
    expect(answered.statusCode).toBe(200);
    expect(await answered.body.json()).toEqual({ order: 'c-9' });
    const repeat = await post('c-9', 'k-1');
    expect(repeat.statusCode).toBe(200);
    expect(repeat.headers[REPLAYED_HEADER]).toBe('true');
    expect(await repeat.body.json()).toEqual({ order: 'c-9' });
    // Another write (another key) is another order.
    const other = post('c-10', 'k-2');
    await until(() => clock.pendingTimers() >= 1);
    clock.advance(20);
    expect((await other).statusCode).toBe(200);
    expect(book.take()).toEqual([
      ['c-9', 1],
      ['c-10', 1],
    ]);
  });
});

describe('a double with the order write route', () => {
  it('leaves the writes out of the double’s own counters, and serves the reads as before', async () => {
    const book = createOrderBook();
    const behaviour = parseBehaviour({});
    const writes = createOrderWriteRoute({ behaviour: () => behaviour, random: createRandom(1), book });
    const double = await startDouble({ route: writes.route });
    try {
      const written = await fetch(`${double.url}/orders`, { method: 'POST', body: '{"checkout":"c-1"}' });
      expect(written.status).toBe(200);
      await written.text();
      const read = await fetch(`${double.url}/stock`);
      expect(read.status).toBe(200);
      await read.text();
      expect(double.stats().received).toBe(1);
      expect(book.take()).toEqual([['c-1', 1]]);
    } finally {
      writes.close();
      await double.close();
    }
  });

  it('refuses a route that is not a function', async () => {
    await expect(startDouble({ route: 'nope' as never })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});

describe('finding redis-server', () => {
  it('finds an executable redis-server on the PATH first, else Debian’s, else none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prazo-redis-'));
    try {
      const binary = join(dir, 'redis-server');
      writeFileSync(binary, '#!/bin/sh\n', { mode: 0o755 });
      expect(findRedisServer(`/nonexistent-dir${delimiter}${dir}`)).toBe(binary);
      chmodSync(binary, 0o644); // not executable: not taken
      expect(findRedisServer(dir)).toBe(existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
