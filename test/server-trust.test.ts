import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { currentCriticality } from '../src/deadline/criticality-context.js';
import {
  type Admission,
  admissionMiddleware,
  createAdmission,
  deadlineMiddleware,
} from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import { withDeadlineHandler } from '../src/server/http.js';
import { createFakeClock, type FakeClock } from '../src/testing/fake-clock.js';
import { CRITICALITY_HEADER, DEADLINE_HEADER } from '../src/wire/index.js';

const T0 = 1_700_000_000_000;
const LIMITS = { defaultMs: 1000, maxMs: 5000 };
/** What a caller claims: top priority, and 300 ms. */
const CLAIMS = { [CRITICALITY_HEADER]: 'critical', [DEADLINE_HEADER]: String(T0 + 300) };

/** What the handler saw of a request. */
interface Seen {
  limitMs: number;
  criticality: string;
  headers: { criticality: string | null; deadline: string | null };
}

function seen(req: { headers: IncomingHttpHeaders; deadline: { limitMs: number } }): Seen {
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value : null;
  };
  return {
    limitMs: req.deadline.limitMs,
    criticality: currentCriticality() ?? 'default',
    headers: { criticality: header(CRITICALITY_HEADER), deadline: header(DEADLINE_HEADER) },
  };
}

interface Running {
  url: string;
  admission: Admission;
  close(): Promise<void>;
}

async function listen(server: Server, admission: Admission): Promise<Running> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`,
    admission,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Trusts the callers on 127.0.0.1 (a mesh peer), not those on 127.0.0.2 (the outside). */
const fromPeer = (req: { socket: { remoteAddress?: string | undefined } }) =>
  req.socket.remoteAddress === '127.0.0.1';

/** The trust a test asks for: 'peer' is {@link fromPeer}. */
type Trust = 'all' | 'none' | 'peer' | { deadline: 'all' | 'none'; criticality: 'all' | 'none' } | undefined;
type Start = (trust: Trust, clock: FakeClock) => Promise<Running>;
const opts = (trust: Parameters<Start>[0], clock: FakeClock) => ({
  ...LIMITS,
  clock,
  ...(trust === undefined ? {} : { trust: trust === 'peer' ? fromPeer : trust }),
});

const adapters: Record<string, Start> = {
  'prazo/http': (trust, clock) => {
    const admission = createAdmission({ clock });
    const handler = withDeadlineHandler(
      (req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(seen(req)));
      },
      { ...opts(trust, clock), admission },
    );
    return listen(createServer(handler), admission);
  },
  'prazo/express': (trust, clock) => {
    const admission = createAdmission({ clock });
    const app = express();
    app.use(deadlineMiddleware(opts(trust, clock)));
    app.get('/work', admissionMiddleware(admission), (req, res) => {
      res.json(seen(req));
    });
    return listen(createServer(app), admission);
  },
  'prazo/fastify': async (trust, clock) => {
    const admission = createAdmission({ clock });
    const app = Fastify();
    await app.register(deadlinePlugin, { ...opts(trust, clock), admission });
    app.get('/work', (request) => seen(request));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/work`;
    return { url, admission, close: () => app.close() };
  },
};

/** Where a client connects from: the peer, or the outside. */
const peer = '127.0.0.1';
const outside = '127.0.0.2';

/** Sends the claims from `localAddress` (node:http's client: it binds the local address it is told). */
async function call(url: string, localAddress: string): Promise<Seen> {
  const req = httpRequest(url, { headers: CLAIMS, localAddress, agent: false });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  expect(res.statusCode).toBe(200);
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return JSON.parse(text) as Seen;
}

/** Requests the admission admitted, by criticality. */
function admitted(admission: Admission): { critical: number; default: number } {
  const [route] = [...admission.routes()];
  return { critical: route?.admitted[0] ?? 0, default: route?.admitted[1] ?? 0 };
}

const IGNORED: Seen = {
  limitMs: T0 + LIMITS.defaultMs,
  criticality: 'default',
  headers: { criticality: null, deadline: null },
};
const HONOURED: Seen = {
  limitMs: T0 + 300,
  criticality: 'critical',
  headers: { criticality: 'critical', deadline: String(T0 + 300) },
};

let running: Running | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe.each(Object.keys(adapters))('%s', (name) => {
  const start = async (trust: Parameters<Start>[0]) => {
    running = await adapters[name]!(trust, createFakeClock(T0));
    return running;
  };

  it("ignores every caller's criticality and deadline without a trust option, and warns once", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }) => {
      if (warning.code === 'PRAZO_UNTRUSTED_HEADER') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const { url, admission } = await start(undefined);
      expect(await call(url, peer)).toEqual(IGNORED);
      expect(await call(url, outside)).toEqual(IGNORED);
      expect(admitted(admission)).toEqual({ critical: 0, default: 2 });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/`trust`/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("honours them with trust: 'all'", async () => {
    const { url, admission } = await start('all');
    expect(await call(url, outside)).toEqual(HONOURED);
    expect(admitted(admission)).toEqual({ critical: 1, default: 0 });
  });

  it('honours them from the callers a predicate trusts, and only from those', async () => {
    const { url, admission } = await start('peer');
    expect(await call(url, outside)).toEqual(IGNORED);
    expect(await call(url, peer)).toEqual(HONOURED);
    expect(admitted(admission)).toEqual({ critical: 1, default: 1 });
  });

  it('takes a policy per header', async () => {
    const { url, admission } = await start({ deadline: 'all', criticality: 'none' });
    expect(await call(url, peer)).toEqual({
      limitMs: T0 + 300,
      criticality: 'default',
      headers: { criticality: null, deadline: String(T0 + 300) },
    });
    expect(admitted(admission)).toEqual({ critical: 0, default: 1 });
  });
});
