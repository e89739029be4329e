/**
 * The source article's chain, as real servers: gateway (node:http) → orders (Express) → inventory
 * (Fastify) → supplier (node:http), each reading the deadline with the adapters and calling the next
 * hop with callWithDeadline.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import Fastify from 'fastify';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, callWithDeadline, currentDeadline, type Deadline, systemClock } from '../src/index.js';
import { deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { deadlineErrorBody, isDeadlineError, withDeadlineHandler } from '../src/server/http.js';
import { createFakeClock } from '../src/testing/fake-clock.js';
import { DEADLINE_HEADER } from '../src/wire/index.js';

type Hop = 'gateway' | 'orders' | 'inventory' | 'supplier';

interface ChainSetup {
  clock: Clock;
  /** Spends `ms` of local work: advances a fake clock, or really waits. */
  work(ms: number): Promise<void>;
  /** Local work per hop before calling the next one, and on the way back (on success only). */
  costs: { gateway: number; orders: number; inventory: number; supplier: number; back: Record<Hop, number> };
  /** The p99 each caller assumes for the hop it calls. */
  p99: { orders: number; inventory: number; supplier: number };
}

interface Chain {
  url: string;
  /** The absolute limit each hop saw, and how many requests each received. */
  seen: Record<Hop, number[]>;
  close(): Promise<void>;
}

// The user's limit reaches the gateway from a frontend the chain trusts; every hop trusts its caller.
const GATEWAY_LIMITS = { defaultMs: 1900, maxMs: 1900, trust: 'all' } as const;
const SERVICE_LIMITS = { defaultMs: 1000, maxMs: 3000, trust: 'all' } as const;

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Calls the next hop under `deadline`; relays its status and JSON body. */
async function callHop(deadline: Deadline, name: string, p99Ms: number, url: string) {
  return callWithDeadline(deadline, {
    name,
    p99Ms,
    run: async ({ signal, headers }) => {
      const res = await request(url, { signal, headers });
      return { status: res.statusCode, body: (await res.body.json()) as unknown };
    },
  });
}

async function startChain(setup: ChainSetup): Promise<Chain> {
  const { clock, work, costs, p99 } = setup;
  const seen: Record<Hop, number[]> = { gateway: [], orders: [], inventory: [], supplier: [] };
  const closers: (() => Promise<void>)[] = [];

  const supplier = createServer(
    withDeadlineHandler(
      async (req, res) => {
        seen.supplier.push(req.deadline.limitMs);
        await work(costs.supplier);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ stock: 7 }));
      },
      { ...SERVICE_LIMITS, clock },
    ),
  );
  const supplierUrl = await listen(supplier);
  closers.push(() => closeServer(supplier));

  const inventory = Fastify();
  await inventory.register(deadlinePlugin, { ...SERVICE_LIMITS, clock });
  inventory.get('/', async (request, reply) => {
    seen.inventory.push(request.deadline.limitMs);
    await work(costs.inventory);
    try {
      const answer = await callHop(request.deadline, 'supplier', p99.supplier, supplierUrl);
      if (answer.status === 200) await work(costs.back.inventory);
      return reply.code(answer.status).send(answer.body);
    } catch (error) {
      if (isDeadlineError(error)) return reply.code(504).send(deadlineErrorBody(error));
      throw error;
    }
  });
  await inventory.listen({ port: 0, host: '127.0.0.1' });
  const inventoryUrl = `http://127.0.0.1:${(inventory.server.address() as AddressInfo).port}/`;
  closers.push(() => inventory.close());

  const ordersApp = express();
  ordersApp.use(deadlineMiddleware({ ...SERVICE_LIMITS, clock }));
  ordersApp.get('/', async (req, res) => {
    seen.orders.push(req.deadline.limitMs);
    await work(costs.orders);
    // The ambient deadline set by the middleware: no argument threading through the service's code.
    const answer = await callHop(currentDeadline()!, 'inventory', p99.inventory, inventoryUrl);
    if (answer.status === 200) await work(costs.back.orders);
    res.status(answer.status).json(answer.body);
  });
  const orders = createServer(ordersApp);
  const ordersUrl = await listen(orders);
  closers.push(() => closeServer(orders));

  const gateway = createServer(
    withDeadlineHandler(
      async (req, res) => {
        seen.gateway.push(req.deadline.limitMs);
        await work(costs.gateway);
        const answer = await callHop(req.deadline, 'orders', p99.orders, ordersUrl);
        if (answer.status === 200) await work(costs.back.gateway);
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      },
      { ...GATEWAY_LIMITS, clock },
    ),
  );
  const url = await listen(gateway);
  closers.push(() => closeServer(gateway));

  return {
    url,
    seen,
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
  };
}

// The article's figures: gateway spends 40 ms, orders 120 ms, the supplier's p99 is 250 ms and the
// user's answer arrives at t0 + 520 ms.
const ARTICLE = {
  costs: {
    gateway: 40,
    orders: 120,
    inventory: 0,
    supplier: 250,
    back: { supplier: 0, inventory: 20, orders: 50, gateway: 40 },
  },
  p99: { orders: 150, inventory: 50, supplier: 250 },
};

let chain: Chain | undefined;
afterEach(async () => {
  await chain?.close();
  chain = undefined;
});

describe('deadline propagation through gateway → orders → inventory → supplier', () => {
  describe('on a fake clock shared by the four services (deterministic)', () => {
    const T0 = 1_700_000_000_000;
    const fake = () => {
      const clock = createFakeClock(T0);
      return { clock, work: async (ms: number) => clock.advance(ms) };
    };

    it('goes through when there is time, and every hop sees the same absolute limit', async () => {
      const { clock, work } = fake();
      chain = await startChain({ clock, work, ...ARTICLE });
      const res = await request(chain.url);
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ stock: 7 });
      const limit = T0 + 1900;
      expect(chain.seen).toEqual({
        gateway: [limit],
        orders: [limit],
        inventory: [limit],
        supplier: [limit],
      });
      expect(clock.now()).toBe(T0 + 520);
    });

    it('never calls the supplier when inventory has 100 ms left and the supplier needs 250 ms', async () => {
      const { clock, work } = fake();
      // Orders is slow today: the request reaches inventory at t0 + 1800 ms.
      chain = await startChain({ clock, work, ...ARTICLE, costs: { ...ARTICLE.costs, orders: 1760 } });
      const res = await request(chain.url);
      expect(res.statusCode).toBe(504);
      expect(await res.body.json()).toEqual({
        error: expect.objectContaining({
          code: 'DEADLINE_INSUFFICIENT',
          dependency: 'supplier',
          remainingMs: 100,
          requiredMs: 250,
        }),
      });
      expect(chain.seen.supplier).toHaveLength(0);
      expect(chain.seen.inventory).toEqual([T0 + 1900]);
      // The failure is immediate: nobody waited for the supplier's 250 ms nor for the deadline.
      expect(clock.now()).toBe(T0 + 1800);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('holds a caller that sends a far-future limit to the local maximum', async () => {
      const { clock, work } = fake();
      chain = await startChain({ clock, work, ...ARTICLE });
      const res = await request(chain.url, { headers: { [DEADLINE_HEADER]: String(T0 + 3_600_000) } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      expect(chain.seen.gateway).toEqual([T0 + 1900]);
      expect(chain.seen.supplier).toEqual([T0 + 1900]);
    });
  });

  describe('in real time, with the article’s numbers', () => {
    // Real time on a shared 2-core machine: a scheduler stall of a few hundred ms is possible, so these
    // two may retry; the fake-clock variants above are the exact, deterministic ones.
    const REAL_TIME = { retry: 2 };
    const real = { clock: systemClock, work: (ms: number) => sleep(ms) };

    it('answers within the limit and every hop sees the same absolute limit', REAL_TIME, async () => {
      chain = await startChain({ ...real, ...ARTICLE });
      const t0 = Date.now();
      const limit = t0 + 1900;
      const res = await request(chain.url, { headers: { [DEADLINE_HEADER]: String(limit) } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      expect(Date.now()).toBeLessThan(limit);
      expect(chain.seen).toEqual({
        gateway: [limit],
        orders: [limit],
        inventory: [limit],
        supplier: [limit],
      });
    });

    it(
      'fails fast without touching the supplier when inventory is left with less than its p99',
      REAL_TIME,
      async () => {
        chain = await startChain({
          ...real,
          costs: { ...ARTICLE.costs, orders: 110 },
          // Low upstream p99s so that only the supplier's 250 ms decides, whatever this machine's load.
          p99: { orders: 20, inventory: 10, supplier: 250 },
        });
        // Warm up connections and code paths with one unhurried request first.
        await (await request(chain.url)).body.dump();
        chain.seen.supplier.length = 0;
        // The user started 1550 ms ago (t0); with gateway 40 ms and orders 110 ms, inventory receives the
        // request at about t0 + 1700 ms: 200 ms left, less than the supplier's 250 ms p99. (The fake-clock
        // variant above has the article's exact 100 ms; here the margin absorbs a loaded machine's delays.)
        const t0 = Date.now() - 1550;
        const started = Date.now();
        const res = await request(chain.url, { headers: { [DEADLINE_HEADER]: String(t0 + 1900) } });
        const elapsed = Date.now() - started;
        expect(res.statusCode).toBe(504);
        const body = (await res.body.json()) as {
          error: { code: string; dependency: string; remainingMs: number };
        };
        expect(body.error).toMatchObject({
          code: 'DEADLINE_INSUFFICIENT',
          dependency: 'supplier',
          requiredMs: 250,
        });
        expect(body.error.remainingMs).toBeLessThanOrEqual(200);
        expect(chain.seen.supplier).toHaveLength(0);
        // Fast: about the 150 ms of local work, not the supplier's 250 ms. Generous for a loaded machine.
        expect(elapsed).toBeLessThan(1500);
      },
    );
  });
});
