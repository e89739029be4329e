/**
 * Four real node:http services (gateway → orders → inventory → supplier), each reading its deadline
 * with `prazo/http` and a clock-skew allowance, and calling the next hop with `dependency()` under the
 * ambient deadline. However the allowance is set, no hop may pass on a later limit than it received.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deadline, type Dependency, dependency } from '../src/index.js';
import { withDeadlineHandler } from '../src/server/http.js';

const HOPS = ['gateway', 'orders', 'inventory', 'supplier'] as const;
type Hop = (typeof HOPS)[number];
const SKEW_MS = 50;

/** The `x-deadline-epoch-ms` each hop received, per request id. */
const received: Record<Hop, Map<string, number>> = {
  gateway: new Map(),
  orders: new Map(),
  inventory: new Map(),
  supplier: new Map(),
};
const servers: Server[] = [];
const clients: Dependency[] = [];
let gatewayUrl = '';

beforeAll(async () => {
  let nextOrigin: string | undefined;
  // Started from the supplier up, so that each hop knows the origin of the next.
  for (const hop of [...HOPS].reverse()) {
    const next =
      nextOrigin === undefined
        ? undefined
        : dependency({
            name: `${hop}-next`,
            origins: [nextOrigin],
            latency: { p99Ms: 200 },
            userDeadlineMs: 5_000,
          });
    if (next) clients.push(next);
    const server = createServer(
      withDeadlineHandler(
        async (req, res) => {
          const id = String(req.headers['x-request-id']);
          received[hop].set(id, Number(req.headers['x-deadline-epoch-ms']));
          let downstream: unknown = null;
          if (next) {
            // orders also asks for far more time explicitly: the ambient deadline must still win.
            const deadline = hop === 'orders' ? Deadline.after(60_000) : undefined;
            const answer = await next.request({
              path: '/',
              headers: { 'x-request-id': id },
              ...(deadline === undefined ? {} : { deadline }),
            });
            downstream = await answer.body.json();
          }
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ hop, downstream }));
        },
        { defaultMs: 1_000, maxMs: 5_000, skewMs: SKEW_MS, trust: 'all' },
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    nextOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  gatewayUrl = `${nextOrigin}/`;
});

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe('a four-hop chain with a skew allowance on every hop', () => {
  it('never sends a later limit than it received, at any hop', async () => {
    for (let i = 0; i < 10; i++) {
      const id = `r${i}`;
      const limit = Date.now() + 1_900 + i * 37;
      const res = await request(gatewayUrl, {
        headers: { 'x-deadline-epoch-ms': String(limit), 'x-request-id': id },
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toMatchObject({
        hop: 'gateway',
        downstream: { hop: 'orders', downstream: { hop: 'inventory', downstream: { hop: 'supplier' } } },
      });
      expect(received.gateway.get(id)).toBe(limit);
      for (let h = 1; h < HOPS.length; h++) {
        const sent = received[HOPS[h]!].get(id);
        expect(sent, `${HOPS[h - 1]} → ${HOPS[h]}`).toBeDefined();
        expect(sent!, `${HOPS[h - 1]} → ${HOPS[h]}`).toBeLessThanOrEqual(received[HOPS[h - 1]!].get(id)!);
      }
      // Nothing along the way moved the limit: the supplier works to the user's own limit.
      expect(received.supplier.get(id)).toBe(limit);
    }
  });

  it('accepts a request that arrives within the skew allowance but passes on no extra time', async () => {
    const id = 'late';
    const limit = Date.now() - 10; // passed 10 ms ago: inside the 50 ms allowance
    const res = await request(gatewayUrl, {
      headers: { 'x-deadline-epoch-ms': String(limit), 'x-request-id': id },
    });
    // The gateway ran (skew excused the arrival check), but its limit has passed: it cannot call on.
    expect(received.gateway.get(id)).toBe(limit);
    expect(res.statusCode).toBe(504);
    expect(await res.body.json()).toMatchObject({ error: { code: 'DEADLINE_INSUFFICIENT' } });
    expect(received.orders.has(id)).toBe(false);
  });
});
