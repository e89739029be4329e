import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { createRetryBudget } from '../policy/retry-budget.js';
import { advance, createTestDependency, settle } from '../testing/test-dependency.js';
import { DIAGNOSTICS_CHANNELS } from './diagnostics.js';

const subscriptions: [string, (message: unknown) => void][] = [];
afterEach(() => {
  for (const [name, fn] of subscriptions.splice(0)) diagnostics.unsubscribe(name, fn);
});

/** Subscribes by name only, as an APM tool that does not import prazo would. */
function record(name: string): unknown[] {
  const seen: unknown[] = [];
  const fn = (message: unknown): void => {
    seen.push(message);
  };
  diagnostics.subscribe(name, fn);
  subscriptions.push([name, fn]);
  return seen;
}

describe('diagnostics_channel events', () => {
  it('publishes a call and its attempts on the prazo:* channels to subscribers that know only the names', async () => {
    const start = record('prazo:call:start');
    const attempts = record('prazo:attempt:end');
    const retries = record('prazo:retry');
    const end = record('prazo:call:end');
    const { dep, clock } = createTestDependency({}, (e) =>
      e.headers['x-prazo-attempt'] === '1;kind=original' ? e.respond(503) : e.respond(200),
    );
    const pending = settle(dep.request({ path: '/stock/42' }));
    await advance(clock, 200);
    expect((await pending).value!.status).toBe(200);
    expect(start).toEqual([expect.objectContaining({ dependency: 'inventory', method: 'GET' })]);
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 1, status: 503, outcome: 'failure' }),
      expect.objectContaining({ attempt: 2, status: 200, outcome: 'success', kind: 'retry' }),
    ]);
    expect(retries).toHaveLength(1);
    expect(end).toEqual([expect.objectContaining({ outcome: 'success', status: 200, attempts: 2 })]);
    await dep.close();
  });

  it('publishes prazo:budget:exhausted when the budget refuses a retry', async () => {
    const exhausted = record('prazo:budget:exhausted');
    const { dep, clock } = createTestDependency({}, (e) => e.respond(503));
    // The floor is one extra per window (0.1/s over 10 s), on the dependency's clock.
    const budget = createRetryBudget({ minPerSecond: 0.1, windowMs: 10_000, clock });
    const { dep: limited } = createTestDependency({ retryBudget: budget, clock }, (e) => e.respond(503));
    await dep.close();
    for (const path of ['/a', '/b']) {
      const pending = settle(limited.request({ path }));
      await advance(clock, 300);
      expect((await pending).value!.status).toBe(503);
    }
    expect(exhausted).toEqual([expect.objectContaining({ dependency: 'inventory', purpose: 'retry' })]);
    await limited.close();
  });

  it('reaches a subscriber that comes after the dependency has served calls, and stops with its unsubscribe', async () => {
    const { dep, clock } = createTestDependency({}, (e) => e.respond(200));
    const call = async (): Promise<void> => {
      const pending = settle(dep.request({ path: '/stock/42' }));
      await advance(clock, 20);
      expect((await pending).value!.status).toBe(200);
    };
    await call();
    const attempts = record('prazo:attempt:end');
    const heard: unknown[] = [];
    const listener = (event: unknown): void => {
      heard.push(event);
    };
    dep.on('request-end', listener);
    await call();
    expect(attempts).toHaveLength(1);
    expect(heard).toHaveLength(1);
    const [name, fn] = subscriptions.pop()!;
    diagnostics.unsubscribe(name, fn);
    dep.off('request-end', listener);
    await call();
    expect(attempts).toHaveLength(1);
    expect(heard).toHaveLength(1);
    await dep.close();
  });

  it("names a channel for every event, in undici's style", () => {
    for (const name of Object.values(DIAGNOSTICS_CHANNELS)) expect(name).toMatch(/^prazo:[a-z]+(:[a-z-]+)?$/);
    expect(DIAGNOSTICS_CHANNELS['budget-exhausted']).toBe('prazo:budget:exhausted');
  });
});
