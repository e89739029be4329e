import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../deadline/context.js';
import { Deadline, readIncomingDeadline } from '../../deadline/deadline.js';
import { createRetryBudget } from '../../policy/retry-budget.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import type { FakeExchange } from '../../testing/fake-transport.js';
import { createTestDependency, settle, TEST_START_MS as T0 } from '../../testing/test-dependency.js';

/** One hop's view: what it received, and the limits its parents set around the call. */
const composition = fc.record({
  header: fc.option(fc.integer({ min: -2_000, max: 10_000 }), { nil: undefined }),
  garbage: fc.boolean(),
  grpcMs: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
  skewMs: fc.integer({ min: 0, max: 500 }),
  defaultMs: fc.integer({ min: 1, max: 5_000 }),
  maxMs: fc.integer({ min: 1, max: 8_000 }),
  elapsedMs: fc.integer({ min: 0, max: 300 }),
  parents: fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 3 }),
  explicit: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
  localMaxMs: fc.integer({ min: 1, max: 10_000 }),
});

describe('deadlines only tighten (property)', () => {
  it('never sends a later limit than any limit received (header with skew, grpc-timeout) or set by a parent (ambient, explicit, local cap)', async () => {
    let sentCases = 0;
    await fc.assert(
      fc.asyncProperty(composition, async (c) => {
        const { dep, clock, transport } = createTestDependency(
          { latency: { p99Ms: 1 }, localMaxMs: c.localMaxMs },
          (e) => e.respond(200),
        );
        try {
          const headers: Record<string, string> = {};
          if (c.header !== undefined)
            headers['x-deadline-epoch-ms'] = c.garbage ? `${T0 + c.header}.5` : String(T0 + c.header);
          if (c.grpcMs !== undefined) headers['grpc-timeout'] = `${c.grpcMs}m`;
          const received = readIncomingDeadline(headers, {
            defaultMs: c.defaultMs,
            maxMs: c.maxMs,
            skewMs: c.skewMs,
            clock,
          });
          const bounds = [received.deadline.limitMs];
          if (c.header !== undefined && !c.garbage) bounds.push(T0 + c.header);
          if (c.grpcMs !== undefined && c.grpcMs > 0) bounds.push(T0 + c.grpcMs);
          clock.advance(c.elapsedMs);
          const now = clock.now();
          bounds.push(now + c.localMaxMs);
          const call = (): Promise<unknown> => {
            const explicit = c.explicit === undefined ? undefined : Deadline.after(c.explicit, clock);
            if (explicit !== undefined) bounds.push(explicit.limitMs);
            return dep.request(explicit === undefined ? { path: '/' } : { path: '/', deadline: explicit });
          };
          const nested = c.parents.reduce<() => Promise<unknown>>((inner, parentMs) => {
            const parent = Deadline.after(parentMs, clock);
            bounds.push(parent.limitMs);
            return () => withDeadline(parent, inner);
          }, call);
          await settle(withDeadline(received.deadline, nested));
          if (transport.exchanges.length > 0) sentCases++;
          for (const exchange of transport.exchanges) {
            const sent = Number(exchange.headers['x-deadline-epoch-ms']);
            for (const bound of bounds) expect(sent).toBeLessThanOrEqual(bound);
          }
        } finally {
          await dep.close();
        }
      }),
      { numRuns: 500 },
    );
    expect(sentCases).toBeGreaterThan(100); // most compositions leave time to call: the property is not vacuous
  });
});

describe('the retry budget counts what reached the dependency (property)', () => {
  const refusedError = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

  it('keeps extras ≤ maxRatio × originals that reached the dependency + floor, however many calls are refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('refused', 'fails', 'ok'), { minLength: 1, maxLength: 120 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        async (calls, maxRatio, floor, attempts) => {
          const clock = createFakeClock(T0);
          // windowMs 10 s: floor = minPerSecond × 10.
          const budget = createRetryBudget({ clock, windowMs: 10_000, maxRatio, minPerSecond: floor / 10 });
          let failing = false;
          const answer = (e: FakeExchange): void => (failing ? e.fail(refusedError) : e.respond(200));
          const { dep, transport } = createTestDependency(
            // Requeues of refused connects have their own budget (requeue.ts): off, to count retries only.
            { clock, retryBudget: budget, attempts, userDeadlineMs: 5_000, requeue: false },
            answer,
          );
          try {
            let refusedCalls = 0;
            for (const kind of calls) {
              failing = kind === 'fails';
              if (kind === 'refused') {
                refusedCalls++;
                await settle(dep.request({ path: '/', deadline: Deadline.after(50, clock) }));
              } else {
                const { value } = await settle(dep.request({ path: '/' }));
                await value?.body.dump();
              }
              clock.advance(1);
            }
            const kinds = transport.exchanges.map(
              (e) => /kind=(\w+)/.exec(e.headers['x-prazo-attempt'] ?? '')?.[1],
            );
            const originals = kinds.filter((k) => k === 'original').length;
            const extras = kinds.length - originals;
            expect(extras).toBeLessThanOrEqual(maxRatio * originals + floor);
            expect(budget.state()).toMatchObject({ originals, extras, refused: refusedCalls });
          } finally {
            await dep.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
