/**
 * The deadline ledger across real hops: node:http, Express and Fastify servers on 127.0.0.1, each
 * with prazo's adapter and prazo's client, answer `Server-Timing`; the outermost client's ledger
 * accounts for the whole chain. And the edges: a plain server, curl and undici calling a prazo
 * server, a browser reading the header.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { launchChromium, skipWithoutChromium } from '../lab/test/support/chromium.js';
import {
  type Dependency,
  dependency,
  isPrazoError,
  type LedgerAttempt,
  type LedgerShare,
} from '../src/index.js';
import { deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { createAdmission, withDeadlineHandler } from '../src/server/http.js';
import { parseServerTiming, readHopTiming } from '../src/wire/server-timing.js';

const noChromium = skipWithoutChromium;
const OPTIONS = { defaultMs: 1_000, maxMs: 3_000, trust: 'all' } as const;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(name: string, origin: string): Dependency {
  const dep = dependency({
    name,
    origins: [origin],
    // A read timeout (1.4 s) far above the chain's 4 × 80 ms, however loaded the machine.
    latency: { p99Ms: 1_000, p95Ms: 500 },
    userDeadlineMs: 3_000,
    attempts: 1,
    hedge: false,
  });
  cleanups.push(() => dep.close());
  return dep;
}

/** What a hop measured of itself: its handler's time minus the time it awaited its dependency. */
type SelfMeasures = Record<string, number[]>;

/** A handler body: `workMs` of its own, then the next hop (if any), then answers. */
async function hopWork(
  name: string,
  workMs: number,
  next: Dependency | null,
  measures: SelfMeasures,
): Promise<string> {
  const t0 = Date.now();
  await sleep(workMs);
  let awaited = 0;
  let below = '';
  if (next !== null) {
    const before = Date.now();
    const res = await next.request({ path: '/' });
    // Waiting on the dependency ends with its answer; reading the body that came with it is this
    // hop's own time (as prazo's tally counts it).
    awaited = Date.now() - before;
    below = await res.body.text();
  }
  measures[name] ??= [];
  measures[name].push(Date.now() - t0 - awaited);
  return `${name}(${below})`;
}

/** gateway (node:http) → orders (Express) → inventory (Fastify) → supplier (node:http). */
async function startChain(workMs: number, measures: SelfMeasures): Promise<string> {
  const supplier = await listen(
    createServer(
      withDeadlineHandler(async (_req, res) => {
        res.end(await hopWork('supplier', workMs, null, measures));
      }, OPTIONS),
    ),
  );
  const fastify: FastifyInstance = Fastify();
  cleanups.push(() => fastify.close());
  await fastify.register(deadlinePlugin, OPTIONS);
  const toSupplier = client('supplier', supplier);
  fastify.get('/', async () => hopWork('inventory', workMs, toSupplier, measures));
  const inventory = await fastify.listen({ port: 0, host: '127.0.0.1' });
  const app = express();
  app.use(deadlineMiddleware(OPTIONS));
  const toInventory = client('inventory', inventory);
  app.get('/', (_req, res, next) => {
    hopWork('orders', workMs, toInventory, measures).then((text) => res.send(text), next);
  });
  const orders = await listen(createServer(app));
  const toOrders = client('orders', orders);
  return listen(
    createServer(
      withDeadlineHandler(async (_req, res) => {
        res.end(await hopWork('gateway', workMs, toOrders, measures));
      }, OPTIONS),
    ),
  );
}

const HOPS = ['gateway', 'orders', 'inventory', 'supplier'] as const;
const PATHS = ['gateway', 'gateway>orders', 'gateway>orders>inventory', 'gateway>orders>inventory>supplier'];

describe('the deadline ledger across four real hops', () => {
  it("accounts for ≥ 95 % of the outermost call, each hop's share within 5 ms of its own measure", async () => {
    const measures: SelfMeasures = {};
    const gateway = client('gateway', await startChain(80, measures));
    // Connections open and code warm before the calls that count.
    await (await gateway.request({ path: '/' })).body.dump();
    // A noisy machine may stall one call between hops: up to eight calls, one must hold. (Four did
    // not suffice once on a day the machine ran 3–4.5× slower, among the files that run four at a
    // time: ratios 0.90–0.97, the parsing and transit between hops taking more of each call.)
    const verdicts: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const started = Date.now();
      const res = await gateway.request({ path: '/', deadline: 2_900 });
      expect(await res.body.text()).toBe('gateway(orders(inventory(supplier())))');
      const elapsed = Date.now() - started;
      const ledger = res.ledger;
      const shares = ledger.shares();
      const own = (path: string): LedgerShare | undefined =>
        shares.find((s) => s.kind === 'own' && s.hop === path);
      const offsets = HOPS.map((hop, h) => Math.abs((own(PATHS[h]!)?.ms ?? Number.NaN) - measures[hop]![i]!));
      // Accounted: this process and every hop's queue and own work; transit (network, parsing) is
      // named too, but not counted as accounted for here.
      const accounted = shares.filter((s) => s.kind !== 'transit').reduce((sum, s) => sum + s.ms, 0);
      const named = shares.reduce((sum, s) => sum + s.ms, 0);
      expect(ledger.elapsedMs).toBeLessThanOrEqual(elapsed);
      expect(named).toBe(ledger.elapsedMs);
      expect(ledger.summary()).toMatch(
        /in gateway, of which \d+ ms waiting on orders, of which \d+ ms waiting on inventory, of which \d+ ms waiting on supplier$/,
      );
      const ratio = accounted / elapsed;
      verdicts.push(`ratio ${ratio.toFixed(3)}, offsets ${offsets.join('/')} ms`);
      if (ratio >= 0.95 && offsets.every((o) => o <= 5)) return;
    }
    expect.fail(`no call held: ${verdicts.join('; ')}`);
  });
});

describe('Server-Timing at the edges', () => {
  it('a prazo client calling a server not on prazo: one opaque interval; a hostile header is ignored with its reason', async () => {
    const headers = [
      undefined,
      'db;dur=53, app;dur=47.2',
      `prazo-handler;dur=${'9'.repeat(8_000)}`,
      'prazo-handler;dur=-5, prazo-wait;desc="x>y>z>a>b>c>d>e";dur=1',
    ];
    let n = 0;
    const plain = await listen(
      createServer((_req, res) => {
        const header = headers[n++ % headers.length];
        if (header !== undefined) res.setHeader('server-timing', header);
        res.end('ok');
      }),
    );
    const dep = client('plain', plain);
    const reasons: (string | null)[] = [];
    for (let i = 0; i < headers.length; i++) {
      const res = await dep.request({ path: '/' });
      expect(await res.body.text()).toBe('ok');
      const attempt = res.ledger.entries.find((e) => e.kind === 'attempt') as LedgerAttempt;
      expect(attempt.remote).toBeNull();
      expect(res.ledger.shares().map((s) => s.kind)).toEqual(['here', 'opaque']);
      expect(attempt.bodyMs).toBeGreaterThanOrEqual(0);
      reasons.push(attempt.ignored);
    }
    expect(reasons).toEqual([null, null, 'too-long', 'bad-value']);
  });

  it('two scopes on one response (Express, the middleware mounted twice) each write their part once, with or without a wrapper of writeHead between them', async () => {
    for (const between of [false, true]) {
      const app = express();
      app.use(deadlineMiddleware({ ...OPTIONS, serverTiming: 'all' }));
      if (between)
        app.use((_req, res, next) => {
          const writeHead = res.writeHead;
          res.writeHead = function (this: typeof res, ...args: unknown[]) {
            this.setHeader('x-wrapped', '1');
            return (writeHead as (...a: unknown[]) => typeof res).apply(this, args);
          } as typeof res.writeHead;
          next();
        });
      app.use(deadlineMiddleware({ ...OPTIONS, serverTiming: 'all' }));
      app.get('/', (_req, res) => void res.send('ok'));
      const origin = await listen(createServer(app));
      const res = await request(`${origin}/`);
      expect(await res.body.text()).toBe('ok');
      const header = String(res.headers['server-timing']);
      expect(parseServerTiming(header).problem).toBeNull();
      expect(header.match(/prazo-left;/g), header).toHaveLength(2);
      expect(res.headers['x-wrapped']).toBe(between ? '1' : undefined);
    }
  });

  it('curl and undici calling prazo servers (node:http, Express, Fastify) get a well-formed header', async () => {
    const http = await listen(createServer(withDeadlineHandler((_req, res) => void res.end('ok'), OPTIONS)));
    const app = express();
    app.use(deadlineMiddleware({ ...OPTIONS, serverTiming: 'all' }));
    app.get('/', (_req, res) => {
      res.setHeader('Server-Timing', 'app;desc="own metric";dur=1.5');
      res.send('ok');
    });
    const ex = await listen(createServer(app));
    const fastify = Fastify();
    cleanups.push(() => fastify.close());
    await fastify.register(deadlinePlugin, { ...OPTIONS, trust: 'none' });
    fastify.get('/', async () => 'ok');
    const fa = await fastify.listen({ port: 0, host: '127.0.0.1' });

    const { stdout } = await promisify(execFile)('curl', ['-sS', '-D', '-', '-o', '/dev/null', `${http}/`]);
    const curlHeader = /^server-timing: (.*)\r$/im.exec(stdout)?.[1];
    expect(curlHeader).toMatch(/^prazo-left;dur=[\d.]+, prazo-queue;dur=[\d.]+, prazo-handler;dur=[\d.]+$/);
    expect(parseServerTiming(curlHeader).problem).toBeNull();

    for (const origin of [http, ex, fa]) {
      const res = await request(`${origin}/`, {
        headers: { 'x-deadline-epoch-ms': String(Date.now() + 800) },
      });
      expect(await res.body.text()).toBe('ok');
      const header = res.headers['server-timing'];
      const parsed = parseServerTiming(header);
      expect(parsed.problem).toBeNull();
      const hop = readHopTiming(header).hop!;
      expect(hop.handlerMs).toBeGreaterThanOrEqual(0);
      expect(hop.queuedMs).toBeGreaterThanOrEqual(0);
      // Trusted: the deadline the caller sent (800 ms, less what a busy machine took to deliver the
      // request); Fastify with trust 'none': its own default (1 000 ms).
      expect(hop.leftMs).toBeGreaterThan(origin === fa ? 800 : 300);
      expect(hop.leftMs).toBeLessThanOrEqual(origin === fa ? 1_000 : 800);
      if (origin === ex) expect(parsed.metrics[0]).toEqual({ name: 'app', durMs: 1.5, desc: 'own metric' });
    }
    // A request that arrived after its deadline: 504 at once, and the header says so.
    const late = await request(`${http}/`, { headers: { 'x-deadline-epoch-ms': String(Date.now() - 50) } });
    await late.body.dump();
    expect(late.statusCode).toBe(504);
    expect(readHopTiming(late.headers['server-timing']).hop?.leftMs).toBeLessThanOrEqual(-50);
  });

  it('says how long a request queued for admission, and who sees the chain (serverTiming)', async () => {
    const plain = await listen(createServer((_req, res) => res.end('ok')));
    const below = client('stock', plain);
    const handler = withDeadlineHandler(
      async (_req, res) => {
        await (await below.request({ path: '/' })).body.dump();
        await sleep(60);
        res.end('ok');
      },
      {
        ...OPTIONS,
        trust: (req) => req.headers['x-mesh'] === '1',
        admission: createAdmission({ maxInFlight: 1 }),
      },
    );
    const origin = await listen(createServer(handler));
    const deadline = { 'x-deadline-epoch-ms': String(Date.now() + 2_000) };
    const [first, second] = await Promise.all([
      request(`${origin}/`, { headers: { ...deadline, 'x-mesh': '1' } }),
      sleep(10).then(() => request(`${origin}/`, { headers: { ...deadline, 'x-mesh': '1' } })),
    ]);
    await Promise.all([first.body.dump(), second.body.dump()]);
    const queued = readHopTiming(second.headers['server-timing']).hop!;
    expect(queued.queuedMs).toBeGreaterThanOrEqual(30);
    expect(queued.dependencies.map((d) => d.name)).toEqual(['stock']);
    // An untrusted caller ('trusted', the default): the hop's own metrics, no dependency names.
    const outsider = await request(`${origin}/`, { headers: deadline });
    await outsider.body.dump();
    expect(String(outsider.headers['server-timing'])).toMatch(
      /^prazo-left;dur=[\d.]+, prazo-queue;dur=[\d.]+, prazo-handler;dur=[\d.]+$/,
    );
    const none = await listen(
      createServer(
        withDeadlineHandler((_req, res) => void res.end('ok'), { ...OPTIONS, serverTiming: 'none' }),
      ),
    );
    const quiet = await request(`${none}/`);
    await quiet.body.dump();
    expect(quiet.headers['server-timing']).toBeUndefined();
    let thrown: unknown;
    try {
      withDeadlineHandler(() => {}, { ...OPTIONS, serverTiming: 'yes' as 'all' });
    } catch (error) {
      thrown = error;
    }
    expect(isPrazoError(thrown, 'INVALID_OPTION')).toBe(true);
    expect((thrown as Error).message).toMatch(/serverTiming/);
  });

  it.skipIf(noChromium)("shows in headless Chromium's PerformanceServerTiming for a page fetch", async () => {
    const origin = await listen(
      createServer(
        withDeadlineHandler(
          async (req, res) => {
            if (req.url === '/api') {
              await sleep(15);
              res.setHeader('content-type', 'application/json');
              res.end('{"ok":true}');
              return;
            }
            res.setHeader('content-type', 'text/html');
            res.end('<!doctype html><title>prazo</title><p>ledger</p>');
          },
          { defaultMs: 1_500, maxMs: 3_000, serverTiming: 'own' },
        ),
      ),
    );
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    // Run in the page (the DOM's types are not this file's).
    const timing = (await page.evaluate(`(async () => {
      const url = new URL('/api', location.href).href;
      await (await fetch(url)).json();
      const entry = performance.getEntriesByName(url)[0];
      return entry.serverTiming.map((t) => ({ name: t.name, duration: t.duration, description: t.description }));
    })()`)) as { name: string; duration: number; description: string }[];
    expect(timing.map((t) => t.name)).toEqual(['prazo-left', 'prazo-queue', 'prazo-handler']);
    const [left, , handler] = timing;
    expect(left!.duration).toBeGreaterThan(1_400);
    expect(left!.duration).toBeLessThanOrEqual(1_500);
    expect(handler!.duration).toBeGreaterThanOrEqual(14);
  });
});
