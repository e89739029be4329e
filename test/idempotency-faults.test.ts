/**
 * The fault matrix of a keyed POST against real servers: in each case exactly one order is created
 * and the caller gets the answer of the execution that created it.
 */
import { NodeHttpHandler } from '@smithy/node-http-handler';
import axios from 'axios';
import got from 'got';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { install, uninstall } from '../src/client/install.js';
import { prazoInterceptor } from '../src/client/interceptor.js';
import type { DependencyOptions } from '../src/index.js';
import { type Fleet, type StoreKind, startFleet } from './support/idempotency-fleet.js';
import { REDIS_MISSING, type RedisServer, startRedis } from './support/redis-server.js';

let redis: RedisServer | undefined;
beforeAll(async () => {
  if (REDIS_MISSING === undefined) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

interface Order {
  order: number;
  replica: string;
  body: string;
}

async function orderThrough(fleet: Fleet, body: string, extra = {}) {
  const dep = fleet.client(extra);
  const res = await dep.request({ method: 'POST', path: '/orders', body });
  return {
    status: res.status,
    replayed: res.headers['idempotent-replayed'],
    order: (await res.body.json()) as Order,
  };
}

/**
 * A fleet whose first execution takes 150 ms: with a p99 of 80 ms the first attempt times out at
 * 112 ms (80 × 1.4) while the order runs, and the retry finds the key running and gets the first
 * execution's answer.
 */
function slowFirstFleet(kind: StoreKind): Promise<Fleet> {
  let slow = 0;
  return startFleet(kind, redis, { fault: () => (slow++ === 0 ? 'slow' : undefined), slowMs: 150 });
}

const kinds: { kind: StoreKind; skip: string | undefined }[] = [
  { kind: 'memory', skip: undefined },
  { kind: 'redis', skip: REDIS_MISSING },
];

describe.each(kinds)('a keyed POST with the $kind store', ({ kind, skip }) => {
  it.skipIf(skip !== undefined)(
    'creates one order when the connection resets after the server handled it (answer lost)',
    async () => {
      let lost = 0;
      const fleet = await startFleet(kind, redis, { fault: () => (lost++ === 0 ? 'lost' : undefined) });
      try {
        const result = await orderThrough(fleet, 'lost answer');
        expect(result.status).toBe(201);
        expect(result.replayed).toBe('true');
        expect(fleet.ledger.orders).toHaveLength(1);
        expect(result.order).toMatchObject({ order: 1, body: 'lost answer' });
      } finally {
        await fleet.close();
      }
    },
  );

  it.skipIf(skip !== undefined)(
    'creates one order when the attempt times out while the server runs it',
    async () => {
      const fleet = await slowFirstFleet(kind);
      try {
        const result = await orderThrough(fleet, 'slow write', { latency: { p99Ms: 80, p95Ms: 40 } });
        expect(result.status).toBe(201);
        expect(fleet.ledger.orders).toHaveLength(1);
        expect(result.order).toMatchObject({ order: 1, body: 'slow write' });
        expect(fleet.layers.reduce((n, l) => n + l.stats().waited + l.stats().replayed, 0)).toBeGreaterThan(
          0,
        );
      } finally {
        await fleet.close();
      }
    },
  );

  it.skipIf(skip !== undefined)(
    'a call that failed, tried again by the caller with a key of its own, makes one order; with minted keys, two',
    async () => {
      // One attempt, cut at 112 ms while the first execution takes 150: the call fails, the order is made.
      const once = { latency: { p99Ms: 80, p95Ms: 40 }, attempts: 1 };
      const order = (fleet: Fleet, body: string, headers?: Record<string, string>) =>
        fleet
          .client(once)
          .request({ method: 'POST', path: '/orders', body, ...(headers ? { headers } : {}) });
      const own = await slowFirstFleet(kind);
      try {
        const headers = { 'idempotency-key': '"order-7"' };
        await expect(order(own, 'order 7', headers)).rejects.toMatchObject({ code: 'READ_TIMEOUT' });
        const res = await order(own, 'order 7', headers);
        expect(res.status).toBe(201);
        expect(await res.body.json()).toMatchObject({ order: 1, body: 'order 7' });
        expect(own.ledger.orders).toHaveLength(1);
      } finally {
        await own.close();
      }
      const minted = await slowFirstFleet(kind);
      try {
        await expect(order(minted, 'order 8')).rejects.toMatchObject({ code: 'READ_TIMEOUT' });
        const res = await order(minted, 'order 8');
        expect(res.status).toBe(201);
        await res.body.dump();
        await new Promise((resolve) => setTimeout(resolve, 200)); // the first execution ends
        expect(minted.ledger.orders).toHaveLength(2);
      } finally {
        await minted.close();
      }
    },
  );

  it.skipIf(skip !== undefined)('creates one order when a hedge races the original', async () => {
    const fleet = await startFleet(kind, redis, { fault: () => 'slow', slowMs: 200 });
    try {
      const result = await orderThrough(fleet, 'hedged write', {
        latency: { p99Ms: 600, p95Ms: 300 },
        hedge: { at: 30 },
      });
      expect(result.status).toBe(201);
      expect(result.order).toMatchObject({ order: 1, body: 'hedged write' });
      // The hedge copy reached a server and waited for the original there.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(fleet.layers.reduce((n, l) => n + l.stats().waited, 0)).toBe(1);
      expect(fleet.ledger.orders).toHaveLength(1);
    } finally {
      await fleet.close();
    }
  });
});

describe("two replicas, each with a store of its own (idempotencyScope: 'instance', the default)", () => {
  const kind = 'memory per instance';
  /** Per replica, the requests with a key its layer saw (ran, waited for the first, or replayed). */
  const seenBy = (fleet: Fleet) =>
    fleet.layers.map((l) => l.stats().executed + l.stats().waited + l.stats().replayed);

  it('creates one order when the attempt times out while the server runs it: the retry goes back', async () => {
    const fleet = await slowFirstFleet(kind);
    try {
      const result = await orderThrough(fleet, 'slow write', { latency: { p99Ms: 80, p95Ms: 40 } });
      expect(result.status).toBe(201);
      expect(fleet.ledger.orders).toHaveLength(1);
      // Every attempt reached the replica that ran the order: the retries joined its execution there.
      const seen = seenBy(fleet);
      expect(seen.filter((n) => n > 0)).toHaveLength(1);
      expect(Math.max(...seen)).toBeGreaterThanOrEqual(2);
    } finally {
      await fleet.close();
    }
  });

  /**
   * A write that takes 150 ms against a read timeout of 112 ms, its last attempt waiting until the
   * deadline (docs/idempotency.md's advice); settles 200 ms after its answer.
   */
  async function waitingWrite(extra: Partial<DependencyOptions>) {
    const fleet = await slowFirstFleet(kind);
    try {
      const result = await orderThrough(fleet, 'slow write, waiting', {
        latency: { p99Ms: 80, p95Ms: 40 },
        lastAttempt: 'deadline',
        ...extra,
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const replicas = seenBy(fleet).filter((n) => n > 0).length;
      return { status: result.status, orders: fleet.ledger.orders.length, replicas };
    } finally {
      await fleet.close();
    }
  }

  it("with lastAttempt: 'deadline' (docs/idempotency.md's advice), sends the retry back to the replica that runs the order, never beside it to the other", async () => {
    // With a second replica and the deadline's rule, a retry of a GET would go out beside the
    // attempt to the other replica; a keyed write whose replicas keep their own keys must not (the
    // other replica would make the order again).
    expect(await waitingWrite({})).toEqual({ status: 201, orders: 1, replicas: 1 });
  });

  it("creates the order twice with lastAttempt: 'deadline' when the client is told the fleet shares the store ('fleet'): the retry goes beside", async () => {
    expect(await waitingWrite({ idempotencyScope: 'fleet' })).toEqual({
      status: 201,
      orders: 2,
      replicas: 2,
    });
  });

  it('creates one order when the answer is lost after the write: the retry is replayed where it ran', async () => {
    let lost = 0;
    const fleet = await startFleet(kind, undefined, { fault: () => (lost++ === 0 ? 'lost' : undefined) });
    try {
      const result = await orderThrough(fleet, 'lost answer');
      expect(result.status).toBe(201);
      expect(result.replayed).toBe('true');
      expect(fleet.ledger.orders).toHaveLength(1);
    } finally {
      await fleet.close();
    }
  });

  /** A write hedged at 30 ms that takes 200 ms; settles 250 ms after its answer. */
  async function hedgedWrite(extra: Partial<DependencyOptions>) {
    const fleet = await startFleet(kind, undefined, { fault: () => 'slow', slowMs: 200 });
    try {
      const result = await orderThrough(fleet, 'hedged write', {
        latency: { p99Ms: 600, p95Ms: 300 },
        hedge: { at: 30 },
        ...extra,
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
      return { status: result.status, orders: fleet.ledger.orders.length, seen: seenBy(fleet).sort() };
    } finally {
      await fleet.close();
    }
  }

  it('sends no hedge copy to the other replica', async () => {
    expect(await hedgedWrite({})).toEqual({ status: 201, orders: 1, seen: [0, 1] });
  });

  it("creates the order twice when the client is told the fleet shares the store ('fleet'): why the default is 'instance'", async () => {
    expect(await hedgedWrite({ idempotencyScope: 'fleet' })).toMatchObject({ status: 201, orders: 2 });
  });
});

describe('two replicas sharing Redis', () => {
  it.skipIf(REDIS_MISSING !== undefined)('create one order when each receives one copy at once', async () => {
    const fleet = await startFleet('redis', redis, { slowMs: 50, fault: () => 'slow' });
    try {
      const send = (origin: string) =>
        request(`${origin}/orders`, {
          method: 'POST',
          body: 'one order',
          headers: { 'idempotency-key': '"both-replicas"' },
        }).then(async (res) => ({ status: res.statusCode, order: (await res.body.json()) as Order }));
      const [a, b] = await Promise.all(fleet.origins.map(send));
      expect(fleet.ledger.orders).toHaveLength(1);
      expect(a!.order).toEqual(b!.order);
      expect([a!.status, b!.status]).toEqual([201, 201]);
    } finally {
      await fleet.close();
    }
  });
});

describe('the other entry points mint keys too', () => {
  it('after install({ nodeHttp: true }): axios, got and the AWS SDK handler each recover a lost answer with one order; so does the global fetch, whose body Node streams, up to the 64 KiB a call records', async () => {
    const fleet = await startFleet('memory per instance', undefined, { fault: () => 'lost' });
    install({
      dependencies: [
        {
          name: 'orders',
          origins: fleet.origins,
          latency: { p99Ms: 600, p95Ms: 300 },
          userDeadlineMs: 3_000,
          attempts: 3,
          hedge: { at: 'p95' },
          idempotencyKey: 'auto',
        },
      ],
      nodeHttp: true,
    });
    try {
      const viaAxios = await axios.post(`${fleet.origins[1]}/orders`, 'via axios', { responseType: 'json' });
      expect(viaAxios.status).toBe(201);
      expect(viaAxios.headers['idempotent-replayed']).toBe('true');
      expect(viaAxios.data).toMatchObject({ order: 1, body: 'via axios' });
      expect(fleet.ledger.orders).toHaveLength(1);
      // got and the AWS SDK v3's handler (their own retries off: prazo's are the ones under test).
      const viaGot = await got.post(`${fleet.origins[0]}/orders`, { body: 'via got', retry: { limit: 0 } });
      expect(viaGot.statusCode).toBe(201);
      expect(viaGot.headers['idempotent-replayed']).toBe('true');
      expect(JSON.parse(viaGot.body)).toMatchObject({ order: 2, body: 'via got' });
      const handler = new NodeHttpHandler();
      try {
        const url = new URL(fleet.origins[1]!);
        const { response } = await handler.handle({
          protocol: url.protocol,
          hostname: url.hostname,
          port: Number(url.port),
          path: '/orders',
          query: {},
          method: 'POST',
          headers: { 'content-length': String(Buffer.byteLength('via the AWS SDK')) },
          body: 'via the AWS SDK',
        } as unknown as Parameters<NodeHttpHandler['handle']>[0]);
        let text = '';
        for await (const chunk of response.body as AsyncIterable<Buffer>) text += chunk;
        expect(response.statusCode).toBe(201);
        expect(response.headers['idempotent-replayed']).toBe('true');
        expect(JSON.parse(text)).toMatchObject({ order: 3, body: 'via the AWS SDK' });
      } finally {
        handler.destroy();
      }
      expect(fleet.ledger.orders).toHaveLength(3);
      // Node's fetch streams every body to the dispatcher, even a string: the keyed call records it
      // as its first attempt sends it, and the retry sends the recorded bytes.
      const viaFetch = await fetch(`${fleet.origins[0]}/orders`, { method: 'POST', body: 'via fetch' });
      expect(viaFetch.status).toBe(201);
      expect(viaFetch.headers.get('idempotent-replayed')).toBe('true');
      expect(await viaFetch.json()).toMatchObject({ order: 4, body: 'via fetch' });
      // So does a stream of the caller's own (no length known beforehand).
      const chunks = ['via ', 'a ', 'stream'];
      const viaStream = await fetch(`${fleet.origins[1]}/orders`, {
        method: 'POST',
        body: new ReadableStream({
          pull(controller) {
            const chunk = chunks.shift();
            if (chunk === undefined) controller.close();
            else controller.enqueue(new TextEncoder().encode(chunk));
          },
        }),
        duplex: 'half',
      } as RequestInit);
      expect(viaStream.status).toBe(201);
      expect(await viaStream.json()).toMatchObject({ order: 5, body: 'via a stream' });
      // A body past the 64 KiB a call records is sent once: the lost answer is the caller's error.
      const large = 'x'.repeat(64 * 1024 + 1);
      const viaLarge = await fetch(`${fleet.origins[0]}/orders`, { method: 'POST', body: large }).catch(
        (error: unknown) => error,
      );
      expect(viaLarge).toBeInstanceOf(TypeError);
      expect((viaLarge as { cause?: { code?: string; attempts?: unknown[] } }).cause).toMatchObject({
        code: 'REQUEST_FAILED',
        attempts: [expect.anything()],
      });
      expect(fleet.ledger.orders).toHaveLength(6);
    } finally {
      await uninstall();
      await fleet.close();
    }
  });

  it.each(['memory', 'memory per instance'] as const)(
    'the undici interceptor and dependency.fetch() recover a lost answer with one order (store: %s)',
    async (kind) => {
      // Every execution loses its answer: only a replay can answer the caller — with a store per
      // instance, only the instance that ran the order can (the retry goes back to it).
      const fleet = await startFleet(kind, undefined, { fault: () => 'lost' });
      const options = {
        name: 'orders',
        origins: fleet.origins,
        latency: { p99Ms: 600, p95Ms: 300 },
        userDeadlineMs: 3_000,
        attempts: 3,
        idempotencyKey: 'auto' as const,
      };
      const interceptor = prazoInterceptor({ dependencies: [options] });
      const agent = new Agent();
      try {
        const res = await agent
          .compose(interceptor)
          .request({ origin: fleet.origins[0]!, path: '/orders', method: 'POST', body: 'via interceptor' });
        expect(res.statusCode).toBe(201);
        expect(res.headers['idempotent-replayed']).toBe('true');
        expect(await res.body.json()).toMatchObject({ order: 1, body: 'via interceptor' });

        const viaFetch = await fleet.client().fetch('/orders', { method: 'POST', body: 'via fetch' });
        expect(viaFetch.status).toBe(201);
        expect(viaFetch.headers.get('idempotent-replayed')).toBe('true');
        expect(await viaFetch.json()).toMatchObject({ order: 2, body: 'via fetch' });
        expect(fleet.ledger.orders).toHaveLength(2);
      } finally {
        await interceptor.close();
        await agent.destroy();
        await fleet.close();
      }
    },
  );
});
