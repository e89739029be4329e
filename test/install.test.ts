import axios from 'axios';
import ky from 'ky';
import { request as undiciRequest } from 'undici';
import { request as urllibRequest } from 'urllib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { install, uninstall } from '../src/client/install.js';
import { isPrazoError } from '../src/errors.js';
import { startServer, warmUp } from './support/servers.js';
import { stockOptions, stockServers } from './support/stock-servers.js';

const SLOT_1 = Symbol.for('undici.globalDispatcher.1');
const SLOT_2 = Symbol.for('undici.globalDispatcher.2');
const slots = globalThis as unknown as Record<symbol, unknown>;

beforeAll(warmUp);

const { flaky, hanging, closeAll } = stockServers();
const options = stockOptions;
afterEach(async () => {
  await uninstall();
  await closeAll();
});

describe('install()', () => {
  it("routes the global fetch and undici's request to a dependency's origin through prazo, and nothing else", async () => {
    const own = await flaky();
    const other = await flaky();
    install({ dependencies: [options(own.origin)] });
    expect((await fetch(`${own.origin}/a`)).status).toBe(200);
    expect(own.seen.retry).toBe(1);
    const res = await undiciRequest(`${own.origin}/b`);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    // Another origin: untouched, so its 503 comes back as it is, with no prazo header.
    expect((await fetch(`${other.origin}/c`)).status).toBe(503);
    expect(other.seen.total).toBe(1);
    expect(other.seen.attempts).toEqual(['']);
  });

  it('is idempotent, and uninstall() restores the dispatcher that was in place', async () => {
    const before = [slots[SLOT_1], slots[SLOT_2]];
    const own = await flaky();
    install({ dependencies: [options(own.origin)] });
    const first = slots[SLOT_1];
    install({ dependencies: [options(own.origin)] });
    expect(slots[SLOT_1]).not.toBe(first);
    // One layer: one prazo attempt header per request, and one retry.
    expect((await fetch(`${own.origin}/a`)).status).toBe(200);
    expect(own.seen.total).toBe(2);
    expect(own.seen.attempts.every((value) => /^\d+;kind=\w+$/.test(value))).toBe(true);
    await uninstall();
    await uninstall();
    expect([slots[SLOT_1], slots[SLOT_2]]).toEqual(before);
  });

  it("passes the dependency's reason phrase on (fetch's statusText, node:http's statusMessage)", async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(req.url === '/busy' ? 503 : 200, req.url === '/busy' ? 'Busy Now' : 'Fine By Me');
      res.end('x');
    });
    const options = {
      name: 'reason',
      origins: [server.origin],
      latency: { p99Ms: 500 },
      userDeadlineMs: 2_000,
    };
    const dep = dependency({ ...options, attempts: 1 });
    try {
      const own = await dep.fetch('/ok');
      expect([own.status, own.statusText, await own.text()]).toEqual([200, 'Fine By Me', 'x']);
      install({ dependencies: [{ ...options, attempts: 1 }], nodeHttp: true });
      const viaFetch = await fetch(`${server.origin}/ok`);
      expect([viaFetch.status, viaFetch.statusText, await viaFetch.text()]).toEqual([200, 'Fine By Me', 'x']);
      const busy = await fetch(`${server.origin}/busy`);
      expect([busy.status, busy.statusText]).toEqual([503, 'Busy Now']);
      await busy.body?.cancel();
      const viaAxios = await axios.get(`${server.origin}/ok`, { responseType: 'text' });
      expect([viaAxios.status, viaAxios.statusText]).toEqual([200, 'Fine By Me']);
    } finally {
      await dep.close();
      await uninstall();
      await server.close();
    }
  });

  it('refuses a dispatcher without compose() and leaves the global one in place', () => {
    const before = slots[SLOT_1];
    expect(() => install({ dependencies: [options('http://127.0.0.1:1')], dispatcher: {} as never })).toThrow(
      /compose/,
    );
    expect(slots[SLOT_1]).toBe(before);
  });
});

describe('third-party clients, unmodified, after install()', () => {
  it('ky', async () => {
    const own = await flaky();
    install({ dependencies: [options(own.origin)] });
    expect(await ky.get(`${own.origin}/stock/42`, { retry: 0 }).json()).toEqual({ stock: 7 });
    expect(own.seen.retry).toBe(1);
  });

  it("urllib (on undici's request)", async () => {
    const own = await flaky();
    install({ dependencies: [options(own.origin)] });
    const res = await urllibRequest(`${own.origin}/stock/42`, { dataType: 'json' });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ stock: 7 });
    expect(own.seen.retry).toBe(1);
  });
});

// The Fetch API's rejections, for dep.fetch and for the global fetch after install().
const fetches: { name: string; setup(origin: string): typeof fetch }[] = [
  {
    name: 'dep.fetch',
    setup(origin) {
      const dep = dependency(options(origin));
      cleanups.push(() => dep.close());
      return dep.fetch as typeof fetch;
    },
  },
  {
    name: 'the global fetch after install()',
    setup(origin) {
      install({ dependencies: [options(origin)] });
      return fetch;
    },
  },
];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

for (const { name, setup } of fetches) {
  describe(`the Fetch contract of ${name}`, () => {
    it("rejects a caller's abort with the signal's reason, an AbortError by default", async () => {
      const server = await hanging();
      const f = setup(server.origin);
      const controller = new AbortController();
      const pending = f(`${server.origin}/slow`, { signal: controller.signal }).catch((e: unknown) => e);
      setTimeout(() => controller.abort(), 30);
      const error = await pending;
      expect(error).toBe(controller.signal.reason);
      expect((error as Error).name).toBe('AbortError');
    });

    it('rejects with the reason given to abort(), and with a TimeoutError for AbortSignal.timeout()', async () => {
      const server = await hanging();
      const f = setup(server.origin);
      const controller = new AbortController();
      const reason = new Error('user left');
      const pending = f(`${server.origin}/slow`, { signal: controller.signal }).catch((e: unknown) => e);
      setTimeout(() => controller.abort(reason), 30);
      expect(await pending).toBe(reason);
      const timedOut = await f(`${server.origin}/slow`, { signal: AbortSignal.timeout(40) }).catch(
        (e: unknown) => e,
      );
      expect((timedOut as Error).name).toBe('TimeoutError');
    });

    it('rejects a call already aborted without sending it', async () => {
      const server = await hanging();
      const f = setup(server.origin);
      const error = await f(`${server.origin}/x`, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
      expect((error as Error).name).toBe('AbortError');
      expect(server.seen.total).toBe(0);
    });

    it('rejects a failure with no response with a TypeError whose cause is the prazo error', async () => {
      const server = await hanging();
      const f = setup(server.origin);
      const error = await f(`${server.origin}/slow`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      const cause = (error as TypeError).cause;
      expect(isPrazoError(cause, 'DEADLINE_EXCEEDED') || isPrazoError(cause, 'READ_TIMEOUT')).toBe(true);
      expect((cause as { attempts: unknown[] }).attempts.length).toBeGreaterThanOrEqual(1);
    });

    it('lets ky tell a user abort (AbortError) from a failure (TypeError)', async () => {
      const server = await hanging();
      const f = setup(server.origin);
      const api = ky.create({ fetch: f, retry: 0, timeout: false });
      const controller = new AbortController();
      const pending = api
        .get(`${server.origin}/slow`, { signal: controller.signal })
        .catch((e: unknown) => e);
      setTimeout(() => controller.abort(), 30);
      expect(((await pending) as Error).name).toBe('AbortError');
      const failed = await api.get(`${server.origin}/slow`).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(TypeError);
    });
  });
}
