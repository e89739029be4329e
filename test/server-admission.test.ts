import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import type { Deadline } from '../src/deadline/deadline.js';
import { currentCriticality } from '../src/index.js';
import {
  type Admission,
  type AdmissionOptions,
  admissionMiddleware,
  createAdmission,
  deadlineMiddleware,
} from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { withDeadlineHandler } from '../src/server/http.js';
import { CRITICALITY_HEADER, DEADLINE_HEADER } from '../src/wire/index.js';
import { startServer, type TestServer } from './support/servers.js';

// Callers inside the trust boundary: their deadline and criticality count.
const OPTIONS = { defaultMs: 1000, maxMs: 5000, trust: 'all' } as const;

/** What the handler under test does: it gets the request's deadline and ends with an answer. */
type Work = (req: { deadline: Deadline }) => Promise<unknown>;

interface Running {
  url: string;
  admission: Admission;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const adapters: Record<string, (work: Work, options: AdmissionOptions) => Promise<Running>> = {
  'prazo/http': async (work, options) => {
    const admission = createAdmission(options);
    const server = createServer(
      withDeadlineHandler(
        async (req, res) => {
          const body = JSON.stringify(await work(req));
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(body);
        },
        { ...OPTIONS, admission, routeKey: (req) => `${req.method} ${req.url?.split('?')[0]}` },
      ),
    );
    const url = await listen(server);
    return { url, admission, close: () => closeServer(server) };
  },
  'prazo/express': async (work, options) => {
    const admission = createAdmission(options);
    const app = express();
    app.use(deadlineMiddleware(OPTIONS));
    app.get('/work', admissionMiddleware(admission), async (req, res) => {
      res.json(await work(req));
    });
    const server = createServer(app);
    const url = await listen(server);
    return { url, admission, close: () => closeServer(server) };
  },
  'prazo/fastify': async (work, options) => {
    const admission = createAdmission(options);
    const app = Fastify();
    await app.register(deadlinePlugin, { ...OPTIONS, admission });
    app.get('/work', (req) => work(req));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    return { url: `http://127.0.0.1:${port}/work`, admission, close: () => app.close() };
  },
};

const agent = new Agent({ connections: 128 });
let running: Running | undefined;
let downstream: TestServer | undefined;
afterEach(async () => {
  await running?.close();
  await downstream?.close();
  running = undefined;
  downstream = undefined;
});

const within = (ms: number) => ({ [DEADLINE_HEADER]: String(Date.now() + ms) });

async function call(url: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await request(url, { headers, dispatcher: agent });
  const body = (await res.body.json()) as Record<string, unknown> & { error?: Record<string, unknown> };
  return { status: res.statusCode, headers: res.headers, body, ms: performance.now() - started };
}

describe.each(Object.keys(adapters))('%s with admission', (name) => {
  const start = async (work: Work, options: AdmissionOptions = {}) => {
    running = await adapters[name]!(work, options);
    return running;
  };

  it("refuses with 504, before the handler, a request whose deadline is below the route's service time", async () => {
    let calls = 0;
    const { url, admission } = await start(
      async () => {
        calls++;
        await sleep(120);
        return { ok: true };
      },
      { minSamples: 5, refreshMs: 0 },
    );
    for (let i = 0; i < 6; i++) expect((await call(url)).status).toBe(200);
    const before = calls;
    // Short of the route's 120 ms, yet long enough to arrive unexpired on a loaded machine (with 15 ms
    // of a 40 ms route, one CI run's request was past its deadline on arrival: 504 `expired`).
    const short = await call(url, within(50));
    expect(short.status).toBe(504);
    expect(short.headers['retry-after']).toBeUndefined();
    expect(short.body.error).toMatchObject({
      code: 'DEADLINE_INSUFFICIENT',
      reason: 'insufficient',
      route: 'GET /work',
    });
    expect(short.body.error?.requiredMs).toBeGreaterThanOrEqual(120);
    expect(calls).toBe(before);
    expect((await call(url, within(2000))).status).toBe(200);
    const [route] = [...admission.routes()];
    expect(route?.key).toBe('GET /work');
  });

  it('answers 503 with Retry-After beyond the in-flight limit when there is no room to queue', async () => {
    const { url } = await start(
      async () => {
        await sleep(150);
        return { ok: true };
      },
      { maxInFlight: 1, maxQueue: 0 },
    );
    const first = call(url);
    await sleep(30);
    const second = await call(url);
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.body.error).toMatchObject({
      code: 'SERVER_OVERLOADED',
      reason: 'queue-full',
      retryAfterSeconds: 1,
    });
    expect((await first).status).toBe(200);
  });

  it('answers a queued request at its deadline with 504 and never runs it', async () => {
    let calls = 0;
    const { url, admission } = await start(
      async () => {
        calls++;
        await sleep(1_000);
        return { ok: true };
      },
      { maxInFlight: 1 },
    );
    const first = call(url, within(3_000));
    await sleep(30);
    const queued = await call(url, within(120));
    const firstStatus = (await first).status;
    expect(queued.status).toBe(504);
    expect(queued.body.error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    // At its 120 ms deadline, not when the first request's second is over. The bound leaves room for
    // a stall of the shared machine: in CI on a slow day (2026-12-07) the 504 took 507 ms, against a
    // bound of 350 ms when the first request took 400.
    expect(queued.ms).toBeLessThan(700);
    expect(admission.queueLength).toBe(0);
    expect(firstStatus).toBe(200);
    expect(calls).toBe(1);
    const [route] = [...admission.routes()];
    expect(route!.refused.reduce((a, b) => a + b, 0)).toBe(1); // counted as queue-expired
  });

  it('runs a queued request in its own context once a slot frees', async () => {
    const { url } = await start(
      async (req) => {
        await sleep(60);
        return { criticality: currentCriticality() ?? null, remaining: req.deadline.remainingMs() > 0 };
      },
      { maxInFlight: 1 },
    );
    const [a, b] = await Promise.all([
      call(url, { [CRITICALITY_HEADER]: 'critical' }),
      call(url, { [CRITICALITY_HEADER]: 'sheddable' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(new Set([a.body.criticality, b.body.criticality])).toEqual(new Set(['critical', 'sheddable']));
  });

  it('forwards the criticality it received on the calls the handler makes with prazo', async () => {
    downstream = await startServer((req, res) => res.end(String(req.headers[CRITICALITY_HEADER] ?? 'none')));
    const dep = dependency({
      name: 'downstream',
      origins: [downstream.origin],
      latency: { p99Ms: 500 },
      userDeadlineMs: 1000,
    });
    try {
      const { url } = await start(async () => {
        const res = await dep.request({ path: '/' });
        return { seen: await res.body.text() };
      });
      expect((await call(url, { [CRITICALITY_HEADER]: 'Sheddable' })).body).toEqual({ seen: 'sheddable' });
      expect((await call(url, { [CRITICALITY_HEADER]: 'critical' })).body).toEqual({ seen: 'critical' });
      expect((await call(url, { [CRITICALITY_HEADER]: 'bogus' })).body).toEqual({ seen: 'none' });
      expect((await call(url)).body).toEqual({ seen: 'none' });
    } finally {
      await dep.close();
    }
  });

  it('under three times its capacity finishes every admitted request within its deadline and refuses fast', async () => {
    const SERVICE_MS = 20;
    const DEADLINE_MS = 300;
    const late: number[] = [];
    const { url, admission } = await start(
      async (req) => {
        await sleep(SERVICE_MS);
        if (req.deadline.remainingMs() < 0) late.push(-req.deadline.remainingMs());
        return { ok: true };
      },
      { maxInFlight: 2, minSamples: 10 },
    );
    // Capacity ≈ 2 slots / 20 ms = 100 req/s; 12 closed-loop clients at one request every 40 ms
    // each offer ≈ 300 req/s. Bounded: 1.5 s of load.
    const stopAt = performance.now() + 1500;
    const results: Array<{ status: number; ms: number; reason: unknown }> = [];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        while (performance.now() < stopAt) {
          const r = await call(url, within(DEADLINE_MS));
          results.push({ status: r.status, ms: r.ms, reason: r.body.error?.reason });
          await sleep(Math.max(0, 40 - r.ms));
        }
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 503 || r.status === 504);
    expect(ok.length + refused.length).toBe(results.length);
    expect(ok.length).toBeGreaterThan(30);
    expect(refused.length).toBeGreaterThan(30);
    expect(late).toEqual([]);
    // Measured by the client, in this same busy process (server, 12 clients, other test files on
    // two cores): the deadline itself is the server's `late` check above; this bounds what the
    // callers saw, nine in ten of them, with room for the event loop's stalls of a busy machine,
    // which every call in flight meanwhile measures (427 ms seen once in CI, 756 ms once in a run
    // of the whole suite on 2026-12-06).
    const okMs = ok.map((r) => r.ms).sort((a, b) => a - b);
    expect(okMs[Math.floor(okMs.length * 0.9)]).toBeLessThan(DEADLINE_MS + 250);
    const refusalMs = refused.map((r) => r.ms).sort((a, b) => a - b);
    expect(refusalMs[Math.floor(refusalMs.length / 2)]).toBeLessThan(DEADLINE_MS / 3);
    expect(admission.inFlight).toBe(0);
    expect(admission.queueLength).toBe(0);
  });
});

describe('prazo/express admissionMiddleware', () => {
  it('keys an app-wide mount by its routeKey, and refuses to run without deadlineMiddleware', async () => {
    const admission = createAdmission({ maxInFlight: 1, maxQueue: 0 });
    const errors: unknown[] = [];
    const app = express();
    app.get('/bare', admissionMiddleware(admission), (_req, res) => {
      res.json({ ok: true });
    });
    app.use(deadlineMiddleware(OPTIONS));
    app.use(admissionMiddleware(admission, { routeKey: (req) => `${req.method} /items/:id` }));
    app.get('/items/:id', (_req, res) => {
      res.json({ ok: true });
    });
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(error);
      res.status(500).json({ error: (error as { code?: string }).code });
    });
    const server = createServer(app);
    const base = (await listen(server)).replace('/work', '');
    try {
      expect((await call(`${base}/items/1`)).status).toBe(200);
      expect((await call(`${base}/items/2`)).status).toBe(200);
      expect([...admission.routes()].map((r) => r.key)).toEqual(['GET /items/:id']);
      const bare = await call(`${base}/bare`);
      expect(bare.status).toBe(500);
      expect(bare.body).toEqual({ error: 'INVALID_OPTION' });
      expect(() => admissionMiddleware({} as Admission)).toThrow(/createAdmission/);
    } finally {
      await closeServer(server);
    }
  });
});
