import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { currentDeadline, type Deadline, DeadlineInsufficientError, isPrazoError } from '../src/index.js';
import { deadlineErrorHandler, deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { withDeadlineHandler } from '../src/server/http.js';
import { createFakeClock, type FakeClock } from '../src/testing/fake-clock.js';
import { DEADLINE_HEADER } from '../src/wire/index.js';

const T0 = 1_700_000_000_000;
// Callers inside the trust boundary: their deadline headers count (test/server-trust.test.ts covers the rest).
const OPTIONS = { defaultMs: 1000, maxMs: 5000, trust: 'all' } as const;

/** What a handler under test does; `reply` answers with JSON in the framework's own idiom. */
type Behaviour = (
  req: { deadline: Deadline; body?: unknown },
  reply: (status: number, body: unknown) => void,
) => void | Promise<void>;

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const adapters: Record<string, (behaviour: Behaviour, clock: FakeClock) => Promise<Running>> = {
  'prazo/http': async (behaviour, clock) => {
    const server = createServer(
      withDeadlineHandler(
        (req, res) =>
          behaviour(req, (status, body) => {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(body));
          }),
        { ...OPTIONS, clock },
      ),
    );
    const url = await listen(server);
    return { url, close: () => closeServer(server) };
  },
  'prazo/express': async (behaviour, clock) => {
    const app = express();
    app.use(express.json(), deadlineMiddleware({ ...OPTIONS, clock }));
    app.all('/', (req, res) => behaviour(req, (status, body) => res.status(status).json(body)));
    app.use(deadlineErrorHandler());
    const server = createServer(app);
    const url = await listen(server);
    return { url, close: () => closeServer(server) };
  },
  'prazo/fastify': async (behaviour, clock) => {
    const app = Fastify();
    await app.register(deadlinePlugin, { ...OPTIONS, clock });
    app.all('/', (request, reply) => {
      void behaviour(request, (status, body) => void reply.code(status).send(body));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    return { url: `http://127.0.0.1:${port}/`, close: () => app.close() };
  },
};

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

let running: Running | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe.each(Object.keys(adapters))('%s', (name) => {
  const start = async (behaviour: Behaviour) => {
    const clock = createFakeClock(T0);
    running = await adapters[name]!(behaviour, clock);
    return { clock, url: running.url };
  };

  it('runs the handler inside the ambient deadline and exposes it on the request', async () => {
    const { clock, url } = await start((req, reply) =>
      reply(200, { limitMs: req.deadline.limitMs, ambient: currentDeadline() === req.deadline }),
    );
    const res = await request(url);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ limitMs: T0 + 1000, ambient: true });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps the ambient deadline after the body has been parsed', async () => {
    const { url } = await start((req, reply) =>
      reply(200, { body: req.body ?? null, ambient: currentDeadline() === req.deadline }),
    );
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [DEADLINE_HEADER]: String(T0 + 700) },
      body: JSON.stringify({ sku: 'A1' }),
    });
    const json = (await res.body.json()) as { ambient: boolean };
    expect(json.ambient).toBe(true);
  });

  it("honours the caller's limit and holds a far-future one to the local maximum", async () => {
    const { url } = await start((req, reply) => reply(200, { limitMs: req.deadline.limitMs }));
    const near = await request(url, { headers: { [DEADLINE_HEADER]: String(T0 + 1900) } });
    expect(await near.body.json()).toEqual({ limitMs: T0 + 1900 });
    const far = await request(url, { headers: { [DEADLINE_HEADER]: String(T0 + 3_600_000) } });
    expect(await far.body.json()).toEqual({ limitMs: T0 + 5000 });
    const garbage = await request(url, { headers: { [DEADLINE_HEADER]: 'soon' } });
    expect(await garbage.body.json()).toEqual({ limitMs: T0 + 1000 });
  });

  it('answers 504 at once, without running the handler, when the request arrives expired', async () => {
    let calls = 0;
    const { clock, url } = await start((_req, reply) => {
      calls++;
      reply(200, {});
    });
    const res = await request(url, { headers: { [DEADLINE_HEADER]: String(T0 - 1) } });
    expect(res.statusCode).toBe(504);
    expect(await res.body.json()).toMatchObject({ error: { code: 'DEADLINE_EXCEEDED' } });
    expect(calls).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("aborts the handler's signal at the deadline and answers 504 when nothing was sent", async () => {
    let signal: AbortSignal | undefined;
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const { clock, url } = await start((req) => {
      signal = req.deadline.signal;
      entered();
    });
    const pending = request(url, { headers: { [DEADLINE_HEADER]: String(T0 + 300) } });
    await inHandler;
    expect(signal?.aborted).toBe(false);
    clock.advance(300);
    const res = await pending;
    expect(res.statusCode).toBe(504);
    expect(await res.body.json()).toMatchObject({ error: { code: 'DEADLINE_EXCEEDED' } });
    expect(isPrazoError(signal?.reason, 'DEADLINE_EXCEEDED')).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("cancels the handler's signal and releases the timer when the client disconnects", async () => {
    let signal: AbortSignal | undefined;
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const { clock, url } = await start((req) => {
      signal = req.deadline.signal;
      entered();
    });
    const client = new AbortController();
    const pending = request(url, { signal: client.signal }).catch(() => 'aborted');
    await inHandler;
    expect(clock.pendingTimers()).toBe(1);
    const cancelled = once(signal!, 'abort');
    client.abort();
    expect(await pending).toBe('aborted');
    await cancelled;
    expect(isPrazoError(signal?.reason, 'CANCELLED')).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('leaves a response the handler already sent alone when the deadline passes', async () => {
    const { clock, url } = await start((_req, reply) => {
      reply(200, { ok: true });
      clock.advance(5000);
    });
    const res = await request(url);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ ok: true });
  });
});

describe('prazo/http error handling', () => {
  it('answers 504 with the typed error when the handler fails for lack of time, 500 otherwise', async () => {
    const errors: unknown[] = [];
    const server = createServer(
      withDeadlineHandler(
        async (req) => {
          if (req.url === '/short') throw new DeadlineInsufficientError('supplier', 100, 250);
          throw new Error('boom');
        },
        { ...OPTIONS, onError: (error) => errors.push(error) },
      ),
    );
    const url = await listen(server);
    running = { url, close: () => closeServer(server) };
    const short = await request(`${url}short`);
    expect(short.statusCode).toBe(504);
    expect(await short.body.json()).toEqual({
      error: expect.objectContaining({
        code: 'DEADLINE_INSUFFICIENT',
        dependency: 'supplier',
        remainingMs: 100,
        requiredMs: 250,
      }),
    });
    const boom = await request(`${url}boom`);
    expect(boom.statusCode).toBe(500);
    await boom.body.dump();
    expect(errors).toHaveLength(2);
  });

  it('drops the late writes of a handler that ignored its signal quietly, and counts them', async () => {
    const clock = createFakeClock(T0);
    const errors: unknown[] = [];
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let lateWrite!: (value: unknown) => void;
    const wroteLate = new Promise((resolve) => {
      lateWrite = resolve;
    });
    const handler = withDeadlineHandler(
      async (req, res) => {
        entered();
        await once(req.deadline.signal, 'abort');
        res.write('late', (error) => lateWrite(error));
        res.writeHead(200);
      },
      { ...OPTIONS, clock, onError: (error) => errors.push(error) },
    );
    const server = createServer(handler);
    const url = await listen(server);
    running = { url, close: () => closeServer(server) };
    const pending = request(url);
    await inHandler;
    clock.advance(OPTIONS.defaultMs);
    const res = await pending;
    expect(res.statusCode).toBe(504);
    await res.body.dump();
    expect(await wroteLate).toBeUndefined(); // dropped: no ERR_STREAM_WRITE_AFTER_END
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([]); // no ERR_HTTP_HEADERS_SENT either
    expect(handler.lateWrites).toBe(1);
  });

  it('rejects unusable options at setup, naming them', () => {
    expect(() => withDeadlineHandler(() => {}, { defaultMs: 0, maxMs: 10 })).toThrow(/`defaultMs`/);
    expect(() => deadlineMiddleware({ defaultMs: 10, maxMs: Number.NaN })).toThrow(/`maxMs`/);
  });
});
