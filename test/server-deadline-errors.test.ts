import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import express from 'express';
import Fastify from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { install, uninstall } from '../src/client/install.js';
import { deadlineErrorHandler, deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { withDeadlineHandler } from '../src/server/http.js';
import { reply, startServer, type TestServer } from './support/servers.js';

// A route has 100 ms (no caller is trusted: every request gets `defaultMs`) and the dependency's
// p99 is 250 ms: each entry point fails before touching it, with DEADLINE_INSUFFICIENT (the issue's
// case: less time left than the dependency's p99), thrown as is or wrapped by fetch and axios.
const SERVER = { defaultMs: 100, maxMs: 100, trust: 'none' } as const;
const P99_MS = 250;

const SLOTS = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')];
const slots = globalThis as unknown as Record<symbol, unknown>;

let supplier: TestServer;
let dep: ReturnType<typeof dependency>;
let before: unknown[];

beforeAll(async () => {
  supplier = await startServer((_req, res) => reply(res, 200, { 'content-type': 'application/json' }, '{}'));
  const options = {
    name: 'supplier',
    origins: [supplier.origin],
    latency: { p99Ms: P99_MS },
    userDeadlineMs: 1000,
  };
  dep = dependency(options);
  before = SLOTS.map((slot) => slots[slot]);
  install({ dependencies: [options] });
});

afterAll(async () => {
  // install() replaced the global dispatcher: put the one in place before back, and check it is.
  await uninstall();
  expect(SLOTS.map((slot) => slots[slot])).toEqual(before);
  await dep.close();
  await supplier.close();
});

/** How each entry point calls the supplier; each rejects with what it wraps prazo's error in. */
const ENTRY_POINTS: Record<string, () => Promise<unknown>> = {
  'dependency().request': async () => (await dep.request({ path: '/stock' })).body.dump(),
  'dependency().fetch': async () => (await dep.fetch(`${supplier.origin}/stock`)).text(),
  'the global fetch after install()': async () => (await fetch(`${supplier.origin}/stock`)).text(),
  "axios with adapter: 'fetch'": () => axios.get(`${supplier.origin}/stock`, { adapter: 'fetch' }),
};
const ROUTES = Object.keys(ENTRY_POINTS).map((name, i) => ({ name, path: `/call/${i}` }));

/** The entry point a route (`/call/<index>`) calls. */
function callFor(path: string): () => Promise<unknown> {
  return ENTRY_POINTS[ROUTES[Number(path.split('/')[2])]?.name ?? '']!;
}

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const adapters: Record<string, () => Promise<Running>> = {
  'prazo/http': () =>
    listen(
      createServer(
        withDeadlineHandler(async (req, res) => {
          await callFor(req.url ?? '')();
          res.end('unreachable');
        }, SERVER),
      ),
    ),
  'prazo/express': () => {
    const app = express();
    app.use(deadlineMiddleware(SERVER));
    app.get('/call/:index', async (req, res) => {
      await callFor(req.path)();
      res.send('unreachable');
    });
    app.use(deadlineErrorHandler());
    return listen(createServer(app));
  },
  'prazo/fastify': async () => {
    const app = Fastify();
    await app.register(deadlinePlugin, SERVER);
    app.get('/call/:index', async (request) => {
      await callFor(request.url)();
      return 'unreachable';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      close: () => app.close(),
    };
  },
};

/** What a stack trace leaves in a body: `at fn (file:line:col)` frames, file paths, `Error:` heads. */
const STACK = /\n\s*at |\bat .*:\d+:\d+|node:internal|\.[cm]?[jt]s:\d+|TypeError|AxiosError/;

describe.each(Object.keys(adapters))('%s', (adapter) => {
  let server: Running;
  beforeAll(async () => {
    server = await adapters[adapter]!();
  });
  afterAll(() => server.close());

  describe.each(ROUTES)('a deadline error from $name', ({ path }) => {
    it('answers 504 with the typed error and no stack trace', async () => {
      const seen = supplier.seen.total;
      const res = await request(`${server.url}${path}`);
      const text = await res.body.text();
      expect(res.statusCode).toBe(504);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(text)).toEqual({
        error: expect.objectContaining({
          code: 'DEADLINE_INSUFFICIENT',
          dependency: 'supplier',
          requiredMs: P99_MS,
        }),
      });
      expect(text).not.toMatch(STACK);
      expect(supplier.seen.total).toBe(seen); // failed before the call
    });
  });
});

describe('prazo/fastify next to an error handler of your own', () => {
  const start = async (options: { answerDeadlineErrors?: boolean }) => {
    const app = Fastify();
    const mine: string[] = [];
    await app.register(deadlinePlugin, { ...SERVER, ...options });
    app.setErrorHandler((error: Error, _request, reply) => {
      mine.push(error.message);
      return reply.code(502).send({ mine: true });
    });
    app.get('/deadline', async () => dep.fetch(`${supplier.origin}/stock`));
    app.get('/other', async () => {
      throw new Error('boom');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return { app, url, mine };
  };

  it('answers deadline errors itself and hands every other error to yours', async () => {
    const { app, url, mine } = await start({});
    try {
      const deadline = await request(`${url}/deadline`);
      expect(deadline.statusCode).toBe(504);
      expect(await deadline.body.json()).toMatchObject({ error: { code: 'DEADLINE_INSUFFICIENT' } });
      const other = await request(`${url}/other`);
      expect(other.statusCode).toBe(502);
      await other.body.dump();
      expect(mine).toEqual(['boom']);
    } finally {
      await app.close();
    }
  });

  it('leaves deadline errors to yours with answerDeadlineErrors: false', async () => {
    const { app, url, mine } = await start({ answerDeadlineErrors: false });
    try {
      const deadline = await request(`${url}/deadline`);
      expect(deadline.statusCode).toBe(502);
      await deadline.body.dump();
      expect(mine).toEqual(['fetch failed']);
    } finally {
      await app.close();
    }
  });

  it('rejects an answerDeadlineErrors that is not a boolean, naming it', async () => {
    const app = Fastify();
    app.register(deadlinePlugin, { ...SERVER, answerDeadlineErrors: 'yes' as never });
    await expect(app.ready()).rejects.toThrow(/`answerDeadlineErrors`/);
    await app.close();
  });
});
