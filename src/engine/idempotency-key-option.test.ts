import { describe, expect, it } from 'vitest';
import type { DependencyOptions } from '../client/options.js';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createFakeTransport, type FakeTransport } from '../testing/fake-transport.js';
import { dependencyOver } from '../testing/test-dependency.js';
import { parseIdempotencyKey } from '../wire/idempotency-key-header.js';

const START = 1_800_000_000_000;

/** A dependency over a fake transport whose first `failures` exchanges answer 503, the rest 201. */
function failingThen201(failures: number, extra: Partial<DependencyOptions> = {}) {
  const clock = createFakeClock(START);
  let transport: FakeTransport | undefined;
  let seen = 0;
  const dep = dependencyOver(
    {
      name: 'orders',
      origins: ['http://10.0.0.1:80', 'http://10.0.0.2:80'],
      latency: { p99Ms: 100 },
      userDeadlineMs: 2_000,
      attempts: 3,
      clock,
      ...extra,
    },
    (o) => {
      transport = createFakeTransport(o.origins, (e) => e.respond(seen++ < failures ? 503 : 201));
      return transport;
    },
  );
  /** Awaits a call, moving the fake clock through its retry delays (bounded). */
  const settle = async <T>(call: Promise<T>): Promise<T> => {
    let done = false;
    const tracked = call.finally(() => {
      done = true;
    });
    for (let i = 0; i < 400 && !done; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(5);
    }
    return tracked;
  };
  return { dep, settle, exchanges: () => transport!.exchanges };
}

describe("idempotencyKey: 'auto'", () => {
  it('mints one key per call, sends it on every attempt, and so retries a POST', async () => {
    const { dep, settle, exchanges } = failingThen201(1, { idempotencyKey: 'auto' });
    const res = await settle(dep.request({ method: 'POST', path: '/orders', body: '{}' }));
    expect(res.status).toBe(201);
    const keys = exchanges().map((e) => e.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    const parsed = parseIdempotencyKey(keys[0]);
    expect(parsed).toMatchObject({ ok: true });
    expect((parsed as { key: string }).key).toMatch(/^[0-9a-f-]{36}$/);
    await dep.close();
  });

  it('mints a different key for each logical call', async () => {
    const { dep, settle, exchanges } = failingThen201(0, { idempotencyKey: 'auto' });
    await settle(dep.request({ method: 'POST', path: '/orders', body: 'a' }));
    await settle(dep.request({ method: 'POST', path: '/orders', body: 'a' }));
    const [a, b] = exchanges().map((e) => e.headers['idempotency-key']);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
    await dep.close();
  });

  it("keeps the caller's own key", async () => {
    const { dep, settle, exchanges } = failingThen201(1, { idempotencyKey: 'auto' });
    await settle(dep.request({ method: 'POST', path: '/orders', headers: { 'Idempotency-Key': '"mine"' } }));
    expect(exchanges().map((e) => e.headers['idempotency-key'])).toEqual(['"mine"', '"mine"']);
    await dep.close();
  });

  it('mints nothing for GET, HEAD or OPTIONS, and nothing when off', async () => {
    const auto = failingThen201(0, { idempotencyKey: 'auto' });
    await auto.settle(auto.dep.request({ path: '/stock' }));
    await auto.settle(auto.dep.request({ method: 'HEAD', path: '/stock' }));
    expect(auto.exchanges().every((e) => e.headers['idempotency-key'] === undefined)).toBe(true);
    await auto.dep.close();
    const off = failingThen201(1);
    await expect(off.settle(off.dep.request({ method: 'POST', path: '/orders' }))).resolves.toMatchObject({
      status: 503,
    });
    expect(off.exchanges()).toHaveLength(1);
    await off.dep.close();
  });

  it("turns on per call, and a call's false overrides the dependency's 'auto'", async () => {
    const perCall = failingThen201(1);
    await perCall.settle(perCall.dep.request({ method: 'POST', path: '/orders', idempotencyKey: 'auto' }));
    expect(perCall.exchanges()).toHaveLength(2);
    await perCall.dep.close();
    const optedOut = failingThen201(1, { idempotencyKey: 'auto' });
    await optedOut.settle(optedOut.dep.request({ method: 'POST', path: '/orders', idempotencyKey: false }));
    expect(optedOut.exchanges()).toHaveLength(1);
    expect(optedOut.exchanges()[0]!.headers['idempotency-key']).toBeUndefined();
    await optedOut.dep.close();
  });

  it('refuses an unknown value, at setup and per call', async () => {
    expect(() => failingThen201(0, { idempotencyKey: 'yes' as never })).toThrow(/idempotencyKey/);
    const { dep } = failingThen201(0);
    const error = await dep
      .request({ method: 'POST', path: '/', idempotencyKey: true as never })
      .catch((e: unknown) => e);
    expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
    await dep.close();
  });

  it("refuses an idempotencyScope other than 'instance' or 'fleet', naming it", () => {
    for (const scope of ['shared', true, 1])
      expect(() => failingThen201(0, { idempotencyScope: scope as never })).toThrow(
        expect.objectContaining({
          code: 'INVALID_OPTION',
          message: expect.stringMatching(/idempotencyScope/),
        }),
      );
    for (const scope of ['instance', 'fleet'] as const)
      expect(() => failingThen201(0, { idempotencyScope: scope })).not.toThrow();
  });
});
