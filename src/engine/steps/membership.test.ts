import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { advance, createTestDependency, flush, settle } from '../../testing/test-dependency.js';
import type { MembershipChangedEvent, MembershipErrorEvent } from '../events.js';

const A = 'http://10.0.0.1:8080';
const B = 'http://10.0.0.2:8080';
const C = 'http://10.0.0.3:8080';

/** A spread of draws, so the balancer's two choices differ from call to call. */
function cycling(): () => number {
  let i = 0;
  return () => (i++ % 10) / 10;
}

describe('dependency() with a resolver of origins', () => {
  it('sends calls to the origins the resolver answers, and to the new set after a refresh', async () => {
    let answer = [A, B];
    const { clock, dep, transport } = createTestDependency(
      { origins: () => answer, originsRefreshMs: 1_000, random: cycling(), balancer: { slowStartMs: 0 } },
      (e) => e.respond(200),
    );
    for (let i = 0; i < 40; i++) await dep.request({ path: '/' });
    expect(new Set(transport.exchanges.map((e) => e.origin))).toEqual(new Set([A, B]));
    answer = [B, C];
    clock.advance(1_000);
    const before = transport.exchanges.length;
    for (let i = 0; i < 6; i++) await dep.request({ path: '/' });
    const after = transport.exchanges.slice(before).map((e) => e.origin);
    expect(after).not.toContain(A);
    expect(new Set(after)).toEqual(new Set([B, C]));
    await dep.close();
  });

  it('holds a call made before the first answer until it comes', async () => {
    let answer: (origins: string[]) => void = () => {};
    const { clock, dep, transport } = createTestDependency(
      { origins: () => new Promise<string[]>((resolve) => (answer = resolve)) },
      (e) => e.respond(200),
    );
    const call = settle(dep.request({ path: '/' }));
    await advance(clock, 100);
    expect(transport.exchanges).toHaveLength(0);
    answer([C]);
    const { value } = await call;
    expect(value?.status).toBe(200);
    expect(transport.exchanges.map((e) => e.origin)).toEqual([C]);
    await dep.close();
  });

  it('fails a call whose deadline passes before the first answer with DEADLINE_EXCEEDED and the resolver error as cause', async () => {
    const { clock, dep, transport } = createTestDependency({
      origins: () => {
        throw new Error('no DNS');
      },
    });
    const call = settle(dep.request({ path: '/', deadline: 300 }));
    await advance(clock, 300, 50);
    const { error } = await call;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect(isPrazoError((error as Error).cause, 'RESOLVER_FAILED')).toBe(true);
    expect(transport.exchanges).toHaveLength(0);
    await dep.close();
  });

  it('ends a call waiting for the first answer at once when the caller cancels it or the dependency closes', async () => {
    const { dep } = createTestDependency({ origins: () => new Promise<string[]>(() => {}) });
    const controller = new AbortController();
    const cancelled = settle(dep.request({ path: '/', signal: controller.signal }));
    const closed = settle(dep.request({ path: '/' }));
    controller.abort();
    expect(isPrazoError((await cancelled).error, 'CANCELLED')).toBe(true);
    await dep.close();
    expect(isPrazoError((await closed).error, 'CANCELLED')).toBe(true);
  });

  it('keeps the last good set when the resolver fails and emits membership events', async () => {
    const answers: Array<() => string[]> = [
      () => [A, B],
      () => {
        throw new Error('SERVFAIL');
      },
      () => [],
      () => [A, C],
    ];
    let i = 0;
    const { clock, dep, transport } = createTestDependency(
      {
        origins: () => answers[Math.min(i++, answers.length - 1)]!(),
        originsRefreshMs: 400,
        random: cycling(),
      },
      (e) => e.respond(200),
    );
    const changed: MembershipChangedEvent[] = [];
    const failed: MembershipErrorEvent[] = [];
    dep.on('membership-changed', (e) => changed.push(e));
    dep.on('membership-error', (e) => failed.push(e));
    clock.advance(400);
    clock.advance(400);
    for (let k = 0; k < 40; k++) await dep.request({ path: '/' });
    expect(new Set(transport.exchanges.map((e) => e.origin))).toEqual(new Set([A, B]));
    expect(failed.map((e) => [e.error.code, e.origins, e.consecutiveFailures])).toEqual([
      ['RESOLVER_FAILED', [A, B], 1],
      ['RESOLVER_FAILED', [A, B], 2],
    ]);
    clock.advance(400);
    await flush();
    expect(changed).toEqual([{ dependency: 'inventory', origins: [A, C], added: [C], removed: [B] }]);
    await dep.close();
  });

  it('refuses a resolver option that is not a number of ms', () => {
    expect(() => createTestDependency({ origins: () => [A], originsRefreshMs: 0 })).toThrow(
      /originsRefreshMs/,
    );
    expect(() => createTestDependency({ origins: () => [A], originsTimeoutMs: Number.NaN })).toThrow(
      /originsTimeoutMs/,
    );
  });

  it('stops resolving on close', async () => {
    let asked = 0;
    const { clock, dep } = createTestDependency({
      origins: () => {
        asked++;
        return [A];
      },
      originsRefreshMs: 1_000,
    });
    await dep.close();
    clock.advance(10_000);
    expect(asked).toBe(1);
  });
});
