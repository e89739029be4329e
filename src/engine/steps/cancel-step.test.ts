import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { calibratePolicy, dependencyOf } from '../../client/dependency.js';
import { normalizeDependencyOptions } from '../../client/options.js';
import { isPrazoError } from '../../errors.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createFakeTransport, type FakeTransport } from '../../testing/fake-transport.js';
import { advance, createTestDependency, settle, TEST_START_MS } from '../../testing/test-dependency.js';
import { createEngine } from '../engine.js';
import { outcomeOf } from '../pipeline.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup() {
  let transport: FakeTransport | undefined;
  const o = normalizeDependencyOptions({
    name: 'inventory',
    origins: ['http://10.0.0.1:80', 'http://10.0.0.2:80'],
    latency: { p99Ms: 100 },
    userDeadlineMs: 1_000,
    clock: createFakeClock(1_800_000_000_000),
  });
  const engine = createEngine(o, calibratePolicy(o, o.latency.p99Ms), () => {
    transport = createFakeTransport(o.origins);
    return transport;
  });
  return { dep: dependencyOf(o, engine), engine, transport: transport! };
}

describe('the caller signal', () => {
  it('is followed through one abort listener however many calls share it, gone when the last settles', async () => {
    const { dep, transport } = setup();
    const shutdown = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const calls = Array.from({ length: 64 }, () => dep.request({ path: '/', signal: shutdown.signal }));
    await flush();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    for (const exchange of transport.pending()) exchange.respond(200);
    await Promise.all(calls);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    await flush();
    process.off('warning', onWarning);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    await dep.close();
  });

  it('made for one call only, is listened to directly, and left to drop its listener itself', async () => {
    const { dep, engine, transport } = setup();
    const handle = singleCallHandle();
    const answered = outcomeOf((out) => engine.requestPrepared({ path: '/' }, null, handle, out));
    await flush();
    expect(handle.added).toBe(1);
    transport.pending()[0]!.respond(200);
    await answered;
    await flush();
    // The step neither shares it nor removes its listener: the handle drops it once the call answered.
    expect(handle.removed).toBe(0);

    const other = singleCallHandle();
    const cancelled = outcomeOf((out) => engine.requestPrepared({ path: '/' }, null, other, out)).catch(
      (e) => e,
    );
    await flush();
    other.abort(new Error('caller gone'));
    expect(isPrazoError(await cancelled, 'CANCELLED')).toBe(true);
    await dep.close();
  });

  it('cancels every call sharing it when it aborts, each with CANCELLED', async () => {
    const { dep } = setup();
    const shutdown = new AbortController();
    const calls = Array.from({ length: 20 }, () =>
      dep.request({ path: '/', signal: shutdown.signal }).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    await flush();
    shutdown.abort(new Error('shutting down'));
    const errors = await Promise.all(calls);
    expect(errors.every((error) => isPrazoError(error, 'CANCELLED'))).toBe(true);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    await dep.close();
  });

  it('a call that settles leaves the others following the signal', async () => {
    const { dep, transport } = setup();
    const shutdown = new AbortController();
    const first = dep.request({ path: '/a', signal: shutdown.signal });
    const second = dep.request({ path: '/b', signal: shutdown.signal }).catch((error: unknown) => error);
    await flush();
    transport
      .pending()
      .find((exchange) => exchange.path === '/a')!
      .respond(200);
    await first;
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    shutdown.abort();
    expect(isPrazoError(await second, 'CANCELLED')).toBe(true);
    await dep.close();
  });

  it('aborts both copies of a hedged try in flight, and a retry delay, when it aborts', async () => {
    const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
    const hedged = new AbortController();
    const pending = settle(dep.request({ path: '/stock/1', signal: hedged.signal }));
    await advance(clock, 60);
    expect(transport.pending()).toHaveLength(2);
    hedged.abort(new Error('gone'));
    expect(isPrazoError((await pending).error, 'CANCELLED')).toBe(true);
    expect(transport.exchanges.map((e) => e.signal.aborted)).toEqual([true, true]);

    const retried = new AbortController();
    const waiting = settle(dep.request({ path: '/stock/2', signal: retried.signal }));
    await advance(clock, 5);
    transport.pending()[0]!.respond(503, { 'retry-after': '0.5' });
    await advance(clock, 20);
    expect(transport.pending()).toHaveLength(0);
    retried.abort();
    const result = await waiting;
    expect(isPrazoError(result.error, 'CANCELLED')).toBe(true);
    expect(clock.now()).toBeLessThan(TEST_START_MS + 400);
    await dep.close();
  });
});

/** An abort handle made for one call, as the interceptor's per-request controller is. */
function singleCallHandle() {
  let listener: (() => void) | null = null;
  return {
    aborted: false,
    reason: undefined as unknown,
    added: 0,
    removed: 0,
    addEventListener(_type: 'abort', l: () => void) {
      this.added++;
      listener = l;
    },
    removeEventListener() {
      this.removed++;
      listener = null;
    },
    abort(reason: Error) {
      this.aborted = true;
      this.reason = reason;
      listener?.();
    },
  };
}

describe('close() as the calls see it', () => {
  it('cancels each call in flight as its caller would: the close is its CANCELLED, and a later abort changes nothing', async () => {
    const { dep, transport } = setup();
    const caller = new AbortController();
    const pending = settle(dep.request({ path: '/', signal: caller.signal }));
    await flush();
    expect(transport.pending()).toHaveLength(1);
    const closing = dep.close();
    caller.abort(new Error('too late'));
    const { error } = await pending;
    expect(isPrazoError(error, 'CANCELLED')).toBe(true);
    expect((error as Error).message).toContain('closed during the call');
    expect(transport.exchanges[0]!.signal.aborted).toBe(true);
    await closing;
  });

  it('fails each call in flight with an error of its own, which carries that call’s attempts', async () => {
    const { dep, transport } = setup();
    const first = settle(dep.request({ path: '/first' }));
    const second = settle(dep.request({ path: '/second' }));
    await flush();
    const [one, two] = transport.pending();
    // The first call's attempt answers 503: it goes on to a retry; the second's is still out.
    (one!.path === '/first' ? one! : two!).respond(503);
    await flush();
    const closing = dep.close();
    const [a, b] = [(await first).error, (await second).error] as {
      code: string;
      attempts: readonly { status?: number }[];
    }[];
    expect(a).not.toBe(b);
    expect([a!.code, b!.code]).toEqual(['CANCELLED', 'CANCELLED']);
    expect(a!.attempts[0]!.status).toBe(503);
    expect(b!.attempts).toHaveLength(1);
    expect(b!.attempts[0]!.status).toBeUndefined();
    await closing;
  });
});
