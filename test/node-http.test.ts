import { getEventListeners } from 'node:events';
import http, * as httpNamespace from 'node:http';
import net, { type AddressInfo } from 'node:net';
import axios, { AxiosError } from 'axios';
import got, { RequestError } from 'got';
import { Agent } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { install, uninstall } from '../src/client/install.js';
import { prazoInterceptor } from '../src/client/interceptor.js';
import { nodeHttpRequest } from '../src/client/node-http/govern-node-http.js';
import type { DependencyOptions } from '../src/client/options.js';
import { isPrazoError } from '../src/errors.js';
import { reply, startServer, type TestServer, warmUp } from './support/servers.js';

// install({ nodeHttp: true }): what node:http callers get for a governed origin, what passes through
// untouched, and that nothing is patched before install() nor after uninstall().

const NODE_REQUEST = http.request;
const NODE_GET = http.get;

beforeAll(warmUp);

const servers: TestServer[] = [];
afterEach(async () => {
  await uninstall();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Parameters<typeof startServer>[0], host?: string): Promise<TestServer> {
  const server = await startServer(handler, host);
  servers.push(server);
  return server;
}

function options(origin: string, extra: Partial<DependencyOptions> = {}): DependencyOptions {
  return { name: 'inventory', origins: [origin], latency: { p99Ms: 300 }, userDeadlineMs: 1_500, ...extra };
}

/** Timeouts far beyond any test's wait. */
const FAR: Partial<DependencyOptions> = { latency: { p99Ms: 10_000 }, userDeadlineMs: 30_000 };

function get(url: string, headers: http.OutgoingHttpHeaders = {}) {
  return new Promise<{ req: http.ClientRequest; res: http.IncomingMessage; body: string }>(
    (resolve, reject) => {
      const req = http.get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ req, res, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
    },
  );
}

describe('install({ nodeHttp: true })', () => {
  it('patches nothing until installed, and uninstall() puts Node’s functions back (ESM bindings too)', async () => {
    expect(http.request).toBe(NODE_REQUEST);
    expect(httpNamespace.request).toBe(NODE_REQUEST);
    const server = await serve((_req, res) => reply(res, 200));
    install({ dependencies: [options(server.origin)] });
    // Without the option, node:http stays Node's.
    expect(http.request).toBe(NODE_REQUEST);
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    expect(http.request).not.toBe(NODE_REQUEST);
    expect(httpNamespace.request).toBe(http.request);
    await uninstall();
    expect(http.request).toBe(NODE_REQUEST);
    expect(http.get).toBe(NODE_GET);
    expect(httpNamespace.request).toBe(NODE_REQUEST);
  });

  it('rejects a nodeHttp that is not a boolean', () => {
    expect(() =>
      install({ dependencies: [options('http://127.0.0.1:1')], nodeHttp: 'yes' as never }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(http.request).toBe(NODE_REQUEST);
  });

  it("governs a dependency's origin — retry, deadline header — and leaves another origin to Node", async () => {
    const own = await serve((_req, res, n) =>
      reply(res, n === 1 ? 503 : 200, { 'set-cookie': 'a=1', 'x-twice': 'one' }, `answer ${n}`),
    );
    const other = await serve((_req, res) => reply(res, 503), '127.0.0.2');
    const prazo = install({ dependencies: [options(own.origin)], nodeHttp: true });
    const ended: string[] = [];
    prazo.dependencies.get('inventory')!.on('request-end', (e) => ended.push(e.outcome));

    const governed = await get(`${own.origin}/stock/42`);
    expect(governed.res.statusCode).toBe(200);
    expect(governed.res.statusMessage).toBe('OK');
    expect(governed.body).toBe('answer 2');
    expect(governed.res.headers['set-cookie']).toEqual(['a=1']);
    expect(governed.res.rawHeaders).toContain('x-twice');
    expect(governed.req).not.toBeInstanceOf(http.ClientRequest);
    expect(own.seen.original).toBe(1);
    expect(own.seen.retry).toBe(1);
    expect(own.seen.deadlines.every((d) => /^\d+$/.test(d))).toBe(true);
    expect(ended).toEqual(['success']);

    const passed = await get(`${other.origin}/x`);
    expect(passed.req).toBeInstanceOf(http.ClientRequest);
    expect(passed.res.statusCode).toBe(503);
    expect(other.seen.total).toBe(1);
    expect(other.seen.attempts).toEqual(['']);
    expect(other.seen.deadlines).toEqual(['']);
  });

  it('streams a large answer to the caller with backpressure, whole', async () => {
    const size = 4 * 1024 * 1024;
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(size) });
      const chunk = Buffer.alloc(64 * 1024, 7);
      let sent = 0;
      const write = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    });
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    const received = await new Promise<number>((resolve, reject) => {
      http
        .get(`${server.origin}/big`, (res) => {
          let total = 0;
          res.on('data', (chunk: Buffer) => {
            total += chunk.length;
            // A slow reader: the call pauses while the answer waits.
            res.pause();
            setImmediate(() => res.resume());
          });
          res.on('end', () => resolve(total));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    expect(received).toBe(size);
  });

  it('passes through untouched what it does not carry: Expect: 100-continue, an upgrade, a caller’s own connection', async () => {
    const server = await serve((req, res) => {
      req.resume();
      req.on('end', () => reply(res, 200, {}, 'plain'));
    });
    const upgrades: string[] = [];
    const raw = http.createServer();
    raw.on('upgrade', (req, socket) => {
      upgrades.push(String(req.headers['x-prazo-attempt'] ?? ''));
      socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: test\r\n\r\n');
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const rawOrigin = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    try {
      install({
        dependencies: [options(server.origin), { ...options(rawOrigin), name: 'raw' }],
        nodeHttp: true,
      });
      const port = Number(new URL(server.origin).port);
      const continued = await new Promise<{ status: number; req: http.ClientRequest }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, method: 'POST', path: '/', headers: { expect: '100-continue' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, req }));
          },
        );
        req.on('continue', () => req.end('body'));
        req.on('error', reject);
      });
      expect(continued.status).toBe(200);
      expect(continued.req).toBeInstanceOf(http.ClientRequest);

      const upgraded = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${rawOrigin}/ws`, { headers: { connection: 'upgrade', upgrade: 'test' } });
        req.on('upgrade', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
      expect(upgraded).toBe(101);
      expect(upgrades).toEqual(['']);

      const own = await new Promise<http.ClientRequest>((resolve, reject) => {
        const req = http.request(`${server.origin}/own`, {
          createConnection: () => net.connect(port, '127.0.0.1'),
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(req));
        });
        req.on('error', reject);
        req.end();
      });
      expect(own).toBeInstanceOf(http.ClientRequest);
      // Only the requests prazo governed carried its attempt header: none of these.
      expect(server.seen.attempts).toEqual(['', '']);
    } finally {
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });

  it("cancels the call when the caller destroys the request, and the caller's signal aborts it", async () => {
    let closed = 0;
    const server = await serve((req) => {
      req.socket.on('close', () => closed++);
    });
    // Timeouts far off: only the caller's cancel can end these calls within the test.
    install({ dependencies: [options(server.origin, FAR)], nodeHttp: true });
    const req = http.get(`${server.origin}/hang`);
    const events: string[] = [];
    req.on('close', () => events.push('close'));
    req.on('error', (e) => events.push(`error ${e.message}`));
    await until(() => server.seen.total === 1);
    req.destroy(new Error('enough'));
    await until(() => closed === 1 && events.length === 2);
    expect(events).toEqual(['error enough', 'close']);

    const controller = new AbortController();
    const aborted = http.get(`${server.origin}/hang`, { signal: controller.signal });
    const error = new Promise<Error>((resolve) => aborted.on('error', resolve));
    await until(() => server.seen.total === 2);
    controller.abort();
    expect((await error).name).toBe('AbortError');
    await until(() => closed === 2);
  });

  it('ends an answer broken midway with aborted, and throws nothing at a caller not listening for errors', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('part');
      setTimeout(() => res.socket?.destroy(), 20).unref();
    });
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    const res = await new Promise<http.IncomingMessage>((resolve) => http.get(`${server.origin}/`, resolve));
    const seen: string[] = [];
    res.on('aborted', () => seen.push('aborted'));
    res.on('close', () => seen.push('close'));
    res.resume();
    await until(() => seen.includes('close'));
    expect(seen).toEqual(['aborted', 'close']);
    expect(res.complete).toBe(false);
  });

  it("leaves nothing armed once a call is over: the idle timer and the caller's signal listener", async () => {
    const server = await serve((_req, res) => reply(res, 200));
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve, reject) => {
        http
          .get(`${server.origin}/x`, { signal: controller.signal, timeout: 5_000 }, (res) => {
            res.resume();
            res.on('end', resolve);
          })
          .on('error', reject);
      });
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // The dependency's own shared timers may be armed; none per call.
    expect(timers() - before).toBeLessThanOrEqual(2);
  });

  it('sends a POST without an Idempotency-Key once, and retries one that carries a key', async () => {
    const server = await serve((req, res) => {
      req.resume();
      req.on('end', () => reply(res, 503));
    });
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    const client = axios.create({ validateStatus: () => true });
    expect((await client.post(`${server.origin}/orders`, { sku: 42 })).status).toBe(503);
    expect(server.seen.total).toBe(1);
    const keyed = await client.post(
      `${server.origin}/orders`,
      { sku: 42 },
      { headers: { 'Idempotency-Key': 'k-1' } },
    );
    expect(keyed.status).toBe(503);
    expect(server.seen.total).toBe(3);
  });

  it('keeps the clients’ own error types, the prazo error as their cause', async () => {
    const server = await serve(() => {});
    install({
      dependencies: [options(server.origin, { latency: { p99Ms: 40 }, attempts: 1 })],
      nodeHttp: true,
    });
    const viaAxios = await axios.get(`${server.origin}/slow`).catch((e: unknown) => e);
    expect(viaAxios).toBeInstanceOf(AxiosError);
    expect(isPrazoError((viaAxios as AxiosError).cause, 'READ_TIMEOUT')).toBe(true);
    const viaGot = await got(`${server.origin}/slow`, { retry: { limit: 0 } }).catch((e: unknown) => e);
    expect(viaGot).toBeInstanceOf(RequestError);
    expect(isPrazoError((viaGot as RequestError).cause, 'READ_TIMEOUT')).toBe(true);
    expect((viaGot as RequestError).code).toBe('READ_TIMEOUT');
  });

  it("multiplies got's own retries by prazo's when both are left on (3 × 2 attempts)", async () => {
    const server = await serve((_req, res) => reply(res, 503));
    install({ dependencies: [options(server.origin)], nodeHttp: true });
    // got's default retry (limit 2, GET on 503), its backoff cut to 1 ms to keep the test short.
    const error = await got(`${server.origin}/x`, {
      retry: { calculateDelay: ({ computedValue }) => (computedValue ? 1 : 0) },
    }).catch((e: unknown) => e);
    expect((error as RequestError).response?.statusCode).toBe(503);
    expect(server.seen.original).toBe(3);
    expect(server.seen.retry).toBe(3);
    expect(server.seen.total).toBe(6);
    // With got's retries off, one call is prazo's two attempts.
    await got(`${server.origin}/x`, { retry: { limit: 0 }, throwHttpErrors: false });
    expect(server.seen.total).toBe(8);
  });

  it("keeps axios's own timeout working (it cancels the prazo call)", async () => {
    let closed = 0;
    const server = await serve((req) => {
      req.socket.on('close', () => closed++);
    });
    install({ dependencies: [options(server.origin, FAR)], nodeHttp: true });
    const error = await axios.get(`${server.origin}/slow`, { timeout: 100 }).catch((e: unknown) => e);
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    await until(() => closed === 1);
  });
});

describe('nodeHttpRequest()', () => {
  it("governs got (its request option) and axios (its transport) alone, Node's http.request untouched", async () => {
    const own = await serve((_req, res, n) => reply(res, n % 2 === 1 ? 503 : 200, {}, `answer ${n}`));
    const other = await serve((_req, res) => reply(res, 503), '127.0.0.2');
    const prazo = prazoInterceptor({ dependencies: [options(own.origin)] });
    const agent = new Agent();
    const request = nodeHttpRequest(prazo, agent.compose(prazo) as never);
    try {
      expect(http.request).toBe(NODE_REQUEST);
      const viaGot = await got(`${own.origin}/a`, { request: request as never, retry: { limit: 0 } }).text();
      expect(viaGot).toBe('answer 2');
      const viaAxios = await axios.get(`${own.origin}/b`, { transport: { request }, responseType: 'text' });
      expect(viaAxios.data).toBe('answer 4');
      expect(own.seen.retry).toBe(2);
      // Another origin goes to Node's own request, untouched.
      const passed = await got(`${other.origin}/c`, {
        request: request as never,
        retry: { limit: 0 },
        throwHttpErrors: false,
      });
      expect(passed.statusCode).toBe(503);
      expect(other.seen.attempts).toEqual(['']);
    } finally {
      await prazo.close();
      await agent.close();
    }
  });

  it('rejects a dispatcher without dispatch()', () => {
    const prazo = prazoInterceptor({ dependencies: [options('http://127.0.0.1:1')] });
    expect(() => nodeHttpRequest(prazo, {} as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    void prazo.close();
  });
});

async function until(condition: () => boolean, ms = 2_000): Promise<void> {
  const end = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
