import { describe, expect, it } from 'vitest';
import type { ResolverError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import type { OriginsDiff } from './diff-origins.js';
import { createOriginPoller, type OriginPollerOptions } from './origin-poller.js';
import type { OriginResolver } from './origin-resolver.js';

const A = 'http://127.0.0.2:8080';
const B = 'http://127.0.0.3:8080';
const C = 'http://127.0.0.4:8080';

/** Lets promise callbacks run (the fake clock only moves timers). */
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function setup(
  resolve: OriginResolver,
  clock = createFakeClock(1_000),
  overrides: Partial<OriginPollerOptions> = {},
) {
  const changes: Array<{ origins: readonly string[]; diff: OriginsDiff; at: number }> = [];
  const errors: Array<{ error: ResolverError; kept: readonly string[]; failures: number; at: number }> = [];
  const poller = createOriginPoller({
    resolve,
    clock,
    refreshMs: 10_000,
    timeoutMs: 2_000,
    onChange: (origins, diff) => changes.push({ origins, diff, at: clock.now() }),
    onError: (error, kept, failures) => errors.push({ error, kept, failures, at: clock.now() }),
    ...overrides,
  });
  return { clock, poller, changes, errors };
}

describe('createOriginPoller', () => {
  it('takes a synchronous answer at once and asks again every refreshMs', () => {
    let calls = 0;
    const { clock, poller, changes } = setup(() => {
      calls++;
      return [A, B];
    });
    expect(poller.ready).toBe(true);
    expect(poller.origins).toEqual([A, B]);
    expect(changes).toEqual([{ origins: [A, B], diff: { added: [A, B], removed: [] }, at: 1_000 }]);
    clock.advance(9_999);
    expect(calls).toBe(1);
    clock.advance(1);
    expect(calls).toBe(2);
    // The same set again is no change.
    expect(changes).toHaveLength(1);
    poller.close();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports what was added and removed when the set changes', () => {
    let answer = [A, B];
    const { clock, poller, changes } = setup(() => answer);
    answer = [B, C];
    clock.advance(10_000);
    expect(changes[1]).toEqual({ origins: [B, C], diff: { added: [C], removed: [A] }, at: 11_000 });
    expect(poller.origins).toEqual([B, C]);
    poller.close();
  });

  it('resolves whenReady once the first asynchronous answer is in', async () => {
    let answer: (value: string[]) => void = () => {};
    const { poller } = setup(() => new Promise<string[]>((resolve) => (answer = resolve)));
    expect(poller.ready).toBe(false);
    let ready = false;
    void poller.whenReady().then(() => (ready = true));
    await flush();
    expect(ready).toBe(false);
    answer([A]);
    await flush();
    expect(ready).toBe(true);
    expect(poller.origins).toEqual([A]);
    poller.close();
  });

  it('keeps the last good set when the resolver throws, rejects, answers nothing or garbage, and says so', async () => {
    const answers: Array<() => unknown> = [
      () => [A, B],
      () => {
        throw new Error('boom');
      },
      () => Promise.reject(new Error('refused')),
      () => [],
      () => ['ftp://nope'],
      () => Promise.reject('a string'),
      () => ({ origins: undefined }),
    ];
    let i = 0;
    // A refresh below the first failure delay: every try comes refreshMs after the previous one.
    const { clock, poller, changes, errors } = setup(() => answers[i++]!() as string[], undefined, {
      refreshMs: 400,
    });
    for (let k = 1; k < answers.length; k++) {
      clock.advance(400);
      await flush();
    }
    expect(changes).toHaveLength(1);
    expect(poller.origins).toEqual([A, B]);
    expect(errors.map((e) => e.error.code)).toEqual(Array(6).fill('RESOLVER_FAILED'));
    expect(errors.map((e) => e.failures)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(errors.every((e) => e.kept.join() === [A, B].join())).toBe(true);
    expect(errors[0]!.error.message).toMatch(/boom/);
    expect((errors[0]!.error.cause as Error).message).toBe('boom');
    expect(errors[2]!.error.message).toMatch(/no origins/);
    expect(errors[3]!.error.message).toMatch(/Entry 0/);
    poller.close();
  });

  it('retries a failed resolution after 0.5 s, 1 s, 2 s … and back to the usual refresh once it succeeds', () => {
    let fail = true;
    const asked: number[] = [];
    const clock = createFakeClock(1_000);
    const { poller, errors } = setup(() => {
      asked.push(clock.now());
      if (fail) throw new Error('down');
      return [A];
    }, clock);
    clock.advance(3_500);
    expect(asked).toEqual([1_000, 1_500, 2_500, 4_500]);
    expect(errors).toHaveLength(4);
    expect(poller.ready).toBe(false);
    expect(poller.lastError?.code).toBe('RESOLVER_FAILED');
    fail = false;
    clock.advance(4_000); // the fifth try, at 8 500
    expect(asked.at(-1)).toBe(8_500);
    expect(poller.ready).toBe(true);
    expect(poller.lastError).toBeUndefined();
    clock.advance(10_000);
    expect(asked.at(-1)).toBe(18_500);
    poller.close();
  });

  it('counts a resolution that takes longer than timeoutMs as failed and ignores its late answer', async () => {
    let answer: ((value: string[]) => void) | undefined;
    let n = 0;
    const { clock, poller, changes, errors } = setup(() => {
      n++;
      if (n === 1) return [A];
      return new Promise<string[]>((resolve) => (answer = resolve));
    });
    clock.advance(10_000);
    clock.advance(2_000);
    expect(errors.map((e) => e.error.message)).toEqual([
      'The resolver of origins did not answer within 2000 ms.',
    ]);
    answer?.([B]);
    await flush();
    expect(poller.origins).toEqual([A]);
    expect(changes).toHaveLength(1);
    poller.close();
  });

  it('honours the refreshMs an answer carries (a DNS TTL) for the next resolution only', () => {
    const asked: number[] = [];
    let withTtl = true;
    const clock = createFakeClock(1_000);
    const { poller } = setup(() => {
      asked.push(clock.now());
      const answer = withTtl ? { origins: [A], refreshMs: 3_000 } : [A];
      withTtl = false;
      return answer;
    }, clock);
    clock.advance(3_000);
    clock.advance(10_000);
    expect(asked).toEqual([1_000, 4_000, 14_000]);
    poller.close();
  });

  it('stops asking on close, drops an answer still on its way, cancels the resolver and releases its waiters', async () => {
    let answer: ((value: string[]) => void) | undefined;
    let cancelled = 0;
    const resolve = Object.assign(() => new Promise<string[]>((r) => (answer = r)), {
      cancel: () => cancelled++,
    });
    const { clock, poller, changes } = setup(resolve);
    const waiting = poller.whenReady();
    poller.close();
    poller.close();
    await waiting;
    expect(cancelled).toBe(1);
    answer?.([A]);
    await flush();
    expect(changes).toHaveLength(0);
    expect(poller.ready).toBe(false);
    clock.advance(60_000);
    expect(clock.pendingTimers()).toBe(0);
  });
});
