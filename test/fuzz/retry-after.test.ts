import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { classify } from '../../src/policy/classify.js';
import { planRetry } from '../../src/policy/plan-retry.js';
import { parseRetryAfter, RETRY_AFTER_MAX_MS } from '../../src/policy/retry-after.js';
import { createRetryBudget } from '../../src/policy/retry-budget.js';
import { createFakeClock } from '../../src/testing/fake-clock.js';
import { headerSlot, RUNS } from './arbitraries.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** An HTTP-date in one of its three forms, for an instant near `now`. */
const httpDate = (now: number) =>
  fc
    .tuple(fc.integer({ min: -86_400_000, max: 2 * 86_400_000 }), fc.constantFrom('imf', 'rfc850', 'asctime'))
    .map(([delta, form]) => {
      const d = new Date(Math.floor((now + delta) / 1000) * 1000);
      const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
      const month = MONTHS[d.getUTCMonth()]!;
      if (form === 'imf')
        return `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${month} ${d.getUTCFullYear()} ${time} GMT`;
      if (form === 'rfc850')
        return `${LONG_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())}-${month}-${pad(d.getUTCFullYear() % 100)} ${time} GMT`;
      return `${DAYS[d.getUTCDay()]} ${month} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${d.getUTCFullYear()}`;
    });

const nowMs = fc.integer({ min: 946_684_800_000, max: 4_000_000_000_000 });
const retryAfterSlot = (now: number) =>
  fc.oneof(
    headerSlot,
    fc.nat({ max: 200_000 }).map(String),
    httpDate(now),
    fc.array(fc.oneof(fc.nat({ max: 5 }).map(String), httpDate(now)), { maxLength: 3 }),
  );

describe('fuzz: Retry-After', () => {
  it('never throws; a wait is an integer in [0, one day] or nothing', () => {
    fc.assert(
      fc.property(
        nowMs.chain((now) => fc.tuple(fc.constant(now), retryAfterSlot(now))),
        ([now, value]) => {
          const ms = parseRetryAfter(value, now);
          if (ms === undefined) return;
          assert.ok(Number.isInteger(ms));
          assert.ok(ms >= 0);
          assert.ok(ms <= RETRY_AFTER_MAX_MS);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('delta-seconds mean exactly that many seconds', () => {
    fc.assert(
      fc.property(fc.nat({ max: 86_400 }), fc.constantFrom('', ' ', '\t'), (seconds, space) => {
        assert.equal(parseRetryAfter(`${space}${seconds}${space}`, 0), seconds * 1000);
      }),
      { numRuns: RUNS },
    );
  });

  it('a retry after a 429 or 503 is never planned to start later than the deadline can hold', () => {
    const clock = createFakeClock(0);
    fc.assert(
      fc.property(
        nowMs.chain((now) =>
          fc.tuple(
            fc.constant(now),
            fc.constantFrom(429, 503, 500, 502, 504, 408),
            retryAfterSlot(now),
            fc.integer({ min: 0, max: 120_000 }),
            fc.integer({ min: 0, max: 5_000 }),
            fc.boolean(),
          ),
        ),
        ([now, status, retryAfter, remainingMs, p99Ms, idempotent]) => {
          const classification = classify(
            {
              kind: 'response',
              status,
              headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
            },
            { idempotent, nowMs: now },
          );
          if (!idempotent && status !== 429) assert.ok(!classification.retry);
          const budget = createRetryBudget({ clock });
          budget.recordOriginal();
          const plan = planRetry({
            classification,
            attemptsMade: 1,
            maxAttempts: 3,
            remainingMs,
            p99Ms,
            budget,
          });
          if (!plan.retry) return;
          // The wait plus a p99 attempt fits what is left: Retry-After cannot outlive the deadline.
          assert.ok(plan.delayMs + p99Ms <= remainingMs);
          if (classification.retryAfterMs !== undefined)
            assert.equal(plan.delayMs, classification.retryAfterMs);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
