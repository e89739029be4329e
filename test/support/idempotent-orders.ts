/**
 * An order service behind each of prazo's server adapters, with the idempotency layer: `POST
 * /orders` reads its body, records one side effect (an order) and answers 201 with the order's
 * number. Tests hold a handler with `gate`, and count side effects per key.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { deadlineMiddleware, idempotencyMiddleware } from '../../src/server/express.js';
import { deadlinePlugin } from '../../src/server/fastify.js';
import { type Idempotency, withDeadlineHandler } from '../../src/server/http.js';

export type AdapterName = 'http' | 'express' | 'fastify';
export const ADAPTERS: readonly AdapterName[] = ['http', 'express', 'fastify'];

/** The shared ledger of side effects: orders created, by idempotency key (or body when none). */
export class Ledger {
  readonly orders: { key: string; body: string; replica: string }[] = [];
  /** Orders created per key, for keys with more than one (duplicates). */
  duplicates(): number {
    const seen = new Map<string, number>();
    for (const o of this.orders) seen.set(o.key, (seen.get(o.key) ?? 0) + 1);
    let n = 0;
    for (const count of seen.values()) if (count > 1) n += count - 1;
    return n;
  }
}

export interface OrderServiceOptions {
  adapter: AdapterName;
  idempotency: Idempotency;
  ledger: Ledger;
  host?: string;
  replica?: string;
  /** Awaited by the handler after it recorded the order and before it answers. */
  gate?: (req: IncomingMessage) => Promise<void> | void;
  /** Answer status (default 201). */
  status?: (body: string) => number;
  defaultMs?: number;
  maxMs?: number;
  /**
   * A fault for this execution (node:http only for 'lost'): 'slow' holds the answer `slowMs` after
   * the order was recorded; 'lost' resets the connection after the order was recorded, then answers
   * into the void (the server handled the request, the client never hears of it).
   */
  fault?: (body: string) => 'slow' | 'lost' | undefined;
  /** @default 150 */
  slowMs?: number;
}

export interface OrderService {
  url: string;
  close(): Promise<void>;
}

function keyOf(req: IncomingMessage, body: string): string {
  const header = req.headers['idempotency-key'];
  return typeof header === 'string' ? header : `body:${body}`;
}

/** Starts the order service on a real server, port 0. */
export async function startOrderService(o: OrderServiceOptions): Promise<OrderService> {
  const host = o.host ?? '127.0.0.1';
  const replica = o.replica ?? host;
  // Its callers are the tests' own clients: their deadline and criticality headers count.
  const deadlineOptions = { defaultMs: o.defaultMs ?? 2_000, maxMs: o.maxMs ?? 5_000, trust: 'all' as const };
  const record = async (req: IncomingMessage, body: string): Promise<{ status: number; payload: string }> => {
    const n = o.ledger.orders.push({ key: keyOf(req, body), body, replica });
    await o.gate?.(req);
    const fault = o.fault?.(body);
    if (fault === 'slow') await new Promise((resolve) => setTimeout(resolve, o.slowMs ?? 150));
    if (fault === 'lost') req.socket.destroy();
    return { status: o.status?.(body) ?? 201, payload: JSON.stringify({ order: n, replica, body }) };
  };
  if (o.adapter === 'http') {
    const server = createServer(
      withDeadlineHandler(
        async (req, res) => {
          let body = '';
          for await (const chunk of req) body += chunk;
          const { status, payload } = await record(req, body);
          res.writeHead(status, { 'content-type': 'application/json', 'x-replica': replica });
          res.end(payload);
        },
        { ...deadlineOptions, idempotency: o.idempotency },
      ),
    );
    return listen(server, host);
  }
  if (o.adapter === 'express') {
    const app = express();
    app.use(
      deadlineMiddleware(deadlineOptions),
      idempotencyMiddleware(o.idempotency),
      express.text({ type: '*/*' }),
    );
    app.post('/orders', async (req, res) => {
      const body = typeof req.body === 'string' ? req.body : '';
      const { status, payload } = await record(req, body);
      res.status(status).set('x-replica', replica).type('application/json').send(payload);
    });
    return listen(createServer(app), host);
  }
  const app = Fastify();
  await app.register(deadlinePlugin, { ...deadlineOptions, idempotency: o.idempotency });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post('/orders', async (request, reply) => {
    const body = typeof request.body === 'string' ? request.body : '';
    const { status, payload } = await record(request.raw, body);
    return reply.code(status).header('x-replica', replica).type('application/json').send(payload);
  });
  await app.listen({ port: 0, host });
  const port = (app.server.address() as AddressInfo).port;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}

async function listen(server: Server, host: string): Promise<OrderService> {
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
