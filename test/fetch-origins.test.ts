import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import type { DependencyOptions } from '../src/client/options.js';
import { isPrazoError } from '../src/errors.js';
import { reply, startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function server(): Promise<TestServer & { authorization: string[] }> {
  const authorization: string[] = [];
  const s = await startServer((req, res) => {
    authorization.push(String(req.headers.authorization ?? ''));
    req.resume();
    req.on('end', () => reply(res, 200, {}, `${req.method} ${req.url}`));
  });
  open.push(s);
  return Object.assign(s, { authorization });
}

function through(origin: string, options: Partial<DependencyOptions> = {}): Dependency {
  const dep = dependency({
    name: 'inventory',
    origins: [origin],
    latency: { p99Ms: 200 },
    userDeadlineMs: 2_000,
    ...options,
  });
  open.push(dep);
  return dep;
}

/** The prazo error behind a Fetch API rejection (a TypeError whose cause it is). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => (error instanceof TypeError ? error.cause : new Error(`not a TypeError: ${error}`)),
  );
}

describe('dep.fetch() and origins', () => {
  it('refuses an absolute URL on another origin with FOREIGN_ORIGIN, sending nothing anywhere', async () => {
    const own = await server();
    const dep = through(own.origin);
    const error = await rejection(
      dep.fetch('http://example.invalid:1/elsewhere', { headers: { authorization: 'Bearer other' } }),
    );
    expect(isPrazoError(error, 'FOREIGN_ORIGIN')).toBe(true);
    expect(error).toMatchObject({ origin: 'http://example.invalid:1', dependency: 'inventory' });
    expect((error as Error).message).not.toContain('/elsewhere');
    const fromUrl = await rejection(dep.fetch(new URL('http://127.0.0.9:1/x')));
    expect(isPrazoError(fromUrl, 'FOREIGN_ORIGIN')).toBe(true);
    expect(own.seen.total).toBe(0);
  });

  it("refuses a Request whose URL is on another origin, and takes one on the dependency's origin", async () => {
    const own = await server();
    const other = await server();
    const dep = through(own.origin);
    const error = await rejection(
      dep.fetch(new Request(`${other.origin}/elsewhere`, { headers: { authorization: 'Bearer other' } })),
    );
    expect(isPrazoError(error, 'FOREIGN_ORIGIN')).toBe(true);
    const res = await dep.fetch(new Request(`${own.origin}/stock/1?x=2`, { method: 'PUT', body: 'b' }));
    expect(await res.text()).toBe('PUT /stock/1?x=2');
    expect(own.seen.total).toBe(1);
    expect(other.seen.total).toBe(0);
  });

  it('keeps paths and URLs on its own origins working', async () => {
    const own = await server();
    const dep = through(own.origin);
    expect(await (await dep.fetch('/stock/1')).text()).toBe('GET /stock/1');
    expect(await (await dep.fetch(`${own.origin}/stock/2?q=1`)).text()).toBe('GET /stock/2?q=1');
    expect(await (await dep.fetch(new URL('/stock/3', own.origin))).text()).toBe('GET /stock/3');
  });

  it('hands another origin, untouched, to passThroughFetch when one is configured', async () => {
    const own = await server();
    const other = await server();
    const dep = through(own.origin, { passThroughFetch: globalThis.fetch });
    const res = await dep.fetch(`${other.origin}/elsewhere`, { headers: { authorization: 'Bearer other' } });
    expect(await res.text()).toBe('GET /elsewhere');
    expect(other.authorization).toEqual(['Bearer other']);
    // Untouched: prazo adds neither its deadline nor its attempt header to a call it does not make.
    expect(other.seen.deadlines).toEqual(['']);
    expect(other.seen.attempts).toEqual(['']);
    expect(own.seen.total).toBe(0);
  });

  it('refuses an input that is neither a path nor an absolute URL, and an init it cannot honour', async () => {
    const own = await server();
    const dep = through(own.origin);
    const option = async (p: Promise<unknown>) => {
      const error = await rejection(p);
      expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
      return (error as { option: string }).option;
    };
    expect(await option(dep.fetch('stock/1'))).toBe('input');
    expect(await option(dep.fetch('//example.invalid/x'))).toBe('input');
    expect(await option(dep.fetch(42 as never))).toBe('input');
    expect(await option(dep.fetch('/x', { redirect: 'follow' }))).toBe('init.redirect');
    expect(await option(dep.fetch('/x', { method: 'POST', body: { a: 1 } as never }))).toBe('init.body');
    expect(await option(dep.fetch('/x', { headers: 5 as never }))).toBe('init.headers');
    expect(await option(dep.fetch('/x', { signal: 'stop' as never }))).toBe('signal');
    expect(own.seen.total).toBe(0);
    expect(() => through(own.origin, { passThroughFetch: 'yes' as never })).toThrow(/passThroughFetch/);
  });
});
