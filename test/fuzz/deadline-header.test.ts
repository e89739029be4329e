import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { Deadline } from '../../src/deadline/deadline.js';
import { isPrazoError } from '../../src/errors.js';
import { createFakeClock } from '../../src/testing/fake-clock.js';
import {
  DEADLINE_HEADER,
  GRPC_TIMEOUT_HEADER,
  normalizeDeadlineHeaderOptions,
  parseDeadlineHeader,
  parseDeadlineHeaderWith,
  parseDeadlineItems,
  parseGrpcTimeout,
} from '../../src/wire/deadline-header.js';
import { headerSlot, headerValue, RUNS } from './arbitraries.js';

// Instants from 1970 to past 2100, and the service's own limits as an operator would set them.
const nowMs = fc.integer({ min: 1_000_000, max: 4_200_000_000_000 });
const limits = fc
  .record({
    maxMs: fc.integer({ min: 1, max: 600_000 }),
    defaultMs: fc.integer({ min: 1, max: 600_000 }),
    skewMs: fc.integer({ min: 0, max: 5_000 }),
  })
  .map((o) => ({ ...o, defaultMs: Math.min(o.defaultMs, o.maxMs * 2) }));

/** A deadline header as peers really send it: near now, far in the future, in the past, or garbage. */
const deadlineSlot = (now: number) =>
  fc.oneof(
    headerSlot,
    fc.integer({ min: -10_000, max: 3_600_000 }).map((delta) => String(now + delta)),
    fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
    fc.array(
      fc.oneof(
        fc.integer({ min: -10_000, max: 3_600_000 }).map((delta) => String(now + delta)),
        headerValue,
      ),
      { minLength: 1, maxLength: 4 },
    ),
  );
const grpcSlot = fc.oneof(
  headerSlot,
  fc
    .tuple(
      fc.integer({ min: 0, max: 99_999_999 }),
      fc.constantFrom('H', 'M', 'S', 'm', 'u', 'n', 'h', 's', ''),
    )
    .map(([n, unit]) => `${n}${unit}`),
);

/** The digits-only items of a header value: the only thing the codec may read as a limit. */
function hasDigitsItem(value: string | readonly string[] | undefined): boolean {
  if (value === undefined) return false;
  const list = typeof value === 'string' ? [value] : value;
  return list.some((entry) => entry.split(',').some((part) => /^\d{1,16}$/.test(part.trim())));
}

describe('fuzz: x-deadline-epoch-ms and grpc-timeout', () => {
  it('never throws, never grants more than now + maxMs, and turns garbage into the default', () => {
    fc.assert(
      fc.property(
        nowMs.chain((now) => fc.tuple(fc.constant(now), deadlineSlot(now), grpcSlot, limits)),
        ([now, value, grpc, options]) => {
          const parsed = parseDeadlineHeader(value, now, { ...options, grpcTimeout: grpc });
          assert.ok(Number.isFinite(parsed.limitMs));
          assert.ok(parsed.limitMs <= now + options.maxMs);
          if (!hasDigitsItem(value) && parseGrpcTimeout(grpc) === undefined) {
            assert.equal(parsed.source, 'default');
            assert.equal(parsed.limitMs, now + Math.min(options.defaultMs, options.maxMs));
          }
          if (parsed.source === 'default') {
            assert.equal(parsed.limitMs, now + Math.min(options.defaultMs, options.maxMs));
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a caller can only ask for less time: a valid header limit is kept unless it is beyond the cap', () => {
    fc.assert(
      fc.property(nowMs, fc.integer({ min: -5_000, max: 3_600_000 }), limits, (now, delta, options) => {
        const parsed = parseDeadlineHeader(String(now + delta), now, options);
        assert.equal(parsed.source, 'header');
        assert.equal(parsed.limitMs, Math.min(now + delta, now + options.maxMs));
        assert.equal(parsed.capped, now + delta > now + options.maxMs);
        // The skew allowance excuses the arrival check only; it never extends the limit.
        assert.equal(parsed.arrivalLimitMs, parsed.capped ? parsed.limitMs : now + delta + options.skewMs);
      }),
      { numRuns: RUNS },
    );
  });

  it('the fast path for one instant or none reads exactly what the item-by-item rules read', () => {
    // Values on the fast path's edges as well: digits with spaces or commas around them, 17 digits,
    // an empty value, no value, and a grpc-timeout beside a plain instant.
    const edge = (now: number) =>
      fc.oneof(
        deadlineSlot(now),
        fc
          .tuple(fc.constantFrom('', ' ', ',', ' ,', '\t'), fc.constantFrom('', ' ', ',', ', 1'))
          .map(([before, after]) => `${before}${now + 500}${after}`),
        fc.bigInt({ min: 10n ** 15n, max: 10n ** 17n }).map(String),
        fc.constant(''),
        fc.constant(undefined),
      );
    fc.assert(
      fc.property(
        nowMs.chain((now) =>
          fc.tuple(fc.constant(now), edge(now), fc.oneof(fc.constant(undefined), grpcSlot), limits),
        ),
        ([now, value, grpc, options]) => {
          const normalized = normalizeDeadlineHeaderOptions(options);
          assert.deepEqual(
            parseDeadlineHeaderWith(value, grpc, now, normalized),
            parseDeadlineItems(value, grpc, now, normalized),
          );
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('grpc-timeout never throws and reads only 1-8 digits and a known unit', () => {
    fc.assert(
      fc.property(grpcSlot, (value) => {
        const ms = parseGrpcTimeout(value);
        if (ms === undefined) return;
        assert.ok(Number.isInteger(ms) && ms >= 0);
        assert.ok(ms <= 99_999_999 * 3_600_000);
      }),
      { numRuns: RUNS },
    );
  });

  it('Deadline.fromHeaders over any header record never leaves more than maxMs', () => {
    const clock = createFakeClock(1_700_000_000_000);
    const record = fc.dictionary(
      fc.constantFrom(DEADLINE_HEADER, GRPC_TIMEOUT_HEADER, 'X-Deadline-Epoch-Ms', 'other', '__proto__'),
      headerSlot,
      { maxKeys: 4 },
    );
    const getter = fc.tuple(fc.option(headerValue), fc.option(headerValue)).map(([deadline, grpc]) => ({
      get: (name: string) =>
        name === DEADLINE_HEADER ? deadline : name === GRPC_TIMEOUT_HEADER ? grpc : null,
    }));
    fc.assert(
      fc.property(fc.oneof(record, getter), limits, (headers, options) => {
        const deadline = Deadline.fromHeaders(headers, { ...options, clock });
        assert.ok(deadline.remainingMs() <= options.maxMs);
      }),
      { numRuns: RUNS },
    );
  });

  it('bad limits are an INVALID_OPTION naming the option, never a silent default', () => {
    const anything = fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 4 }), fc.constant(undefined));
    fc.assert(
      fc.property(fc.record({ defaultMs: anything, maxMs: anything, skewMs: anything }), (options) => {
        try {
          const normalized = normalizeDeadlineHeaderOptions(options as never);
          assert.ok(normalized.maxMs > 0 && Number.isFinite(normalized.maxMs));
          assert.ok(normalized.defaultMs <= normalized.maxMs);
        } catch (error) {
          assert.ok(isPrazoError(error, 'INVALID_OPTION'));
          assert.match((error as unknown as { option: string }).option, /^(defaultMs|maxMs|skewMs|options)$/);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
