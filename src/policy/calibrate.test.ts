import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { CALIBRATION_DEFAULTS, calibrateTimeout, MAX_DURATION_MS, readTimeoutMs } from './calibrate.js';

describe('calibrateTimeout', () => {
  describe("the article's reference values", () => {
    it('gives connect 252, read 252 and 2 attempts for p99 180 ms within 1500 ms', () => {
      expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, attempts: 2 })).toEqual({
        connectMs: 252,
        readMs: 252,
        attempts: 2,
        warning: null,
        warnings: [],
      });
    });

    it('keeps the read timeout above the measured p99', () => {
      expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }).readMs).toBeGreaterThan(180);
    });

    it('reduces attempts instead of shrinking the timeout when 600 ms cannot hold 3 attempts', () => {
      const policy = calibrateTimeout({ p99Ms: 180, userDeadlineMs: 600, attempts: 3 });
      expect(policy.readMs).toBe(252);
      expect(policy.attempts).toBe(2);
      expect(policy.warning).toMatchObject({
        code: 'ATTEMPTS_REDUCED',
        requestedAttempts: 3,
        fittingAttempts: 2,
      });
      expect(policy.warning?.message).toContain('600 ms deadline fits 2 attempts');
      expect(policy.warning?.message).toContain('not 3');
    });
  });

  it('defaults to 2 attempts, slack 1.4, connect cap 400 ms and 30 ms overhead', () => {
    expect(CALIBRATION_DEFAULTS).toEqual({
      slack: 1.4,
      connectCapMs: 400,
      overheadPerAttemptMs: 30,
      attempts: 2,
    });
    expect(Object.isFrozen(CALIBRATION_DEFAULTS)).toBe(true);
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }).attempts).toBe(2);
  });

  it('caps the connect timeout at 400 ms however slow the dependency', () => {
    const policy = calibrateTimeout({ p99Ms: 2000, userDeadlineMs: 10_000 });
    expect(policy).toMatchObject({ connectMs: 400, readMs: 2800 });
  });

  it('derives the connect timeout from the connect-phase p99 when it is known', () => {
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, connectP99Ms: 20 }).connectMs).toBe(28);
    expect(calibrateTimeout({ p99Ms: 900, userDeadlineMs: 5000, connectP99Ms: 500 }).connectMs).toBe(400);
    expect(
      calibrateTimeout({ p99Ms: 900, userDeadlineMs: 5000, connectP99Ms: 500 }, { connectCapMs: 1000 })
        .connectMs,
    ).toBe(700);
  });

  it('fits attempts exactly when attempts × (read + overhead) equals the deadline', () => {
    // 2 × (252 + 30) = 564
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 564, attempts: 2 }).warning).toBeNull();
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 563, attempts: 2 })).toMatchObject({
      attempts: 1,
      warning: { code: 'ATTEMPTS_REDUCED', fittingAttempts: 1 },
    });
  });

  it('warns DEADLINE_BELOW_ONE_ATTEMPT instead of silently returning one attempt longer than the deadline', () => {
    // The article's sketch returns { leituraMs: 252, tentativas: 1 } here with a misleading "fits 1" alert
    // (Math.max(1, 0)): a 200 ms deadline does not hold one 252 ms attempt.
    const policy = calibrateTimeout({ p99Ms: 180, userDeadlineMs: 200, attempts: 2 });
    expect(policy.readMs).toBe(252);
    expect(policy.attempts).toBe(1);
    expect(policy.warning).toMatchObject({
      code: 'DEADLINE_BELOW_ONE_ATTEMPT',
      requestedAttempts: 2,
      fittingAttempts: 0,
    });
    expect(policy.warning?.message).toContain('cannot hold even one attempt');
  });

  it('warns DEADLINE_BELOW_ONE_ATTEMPT even when a single attempt was requested', () => {
    const policy = calibrateTimeout({ p99Ms: 180, userDeadlineMs: 281, attempts: 1 });
    expect(policy.warning?.code).toBe('DEADLINE_BELOW_ONE_ATTEMPT');
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 282, attempts: 1 }).warning).toBeNull();
  });

  it('honours a custom slack and overhead', () => {
    expect(
      calibrateTimeout(
        { p99Ms: 100, userDeadlineMs: 1000, attempts: 3 },
        { slack: 1.5, overheadPerAttemptMs: 0 },
      ),
    ).toEqual({ connectMs: 150, readMs: 150, attempts: 3, warning: null, warnings: [] });
  });

  it('clamps a read timeout above 2^31−1 ms (Node’s timer maximum) and says so with READ_TIMEOUT_CLAMPED', () => {
    const policy = calibrateTimeout({ p99Ms: 2_000_000_000, userDeadlineMs: MAX_DURATION_MS, attempts: 1 });
    expect(policy.readMs).toBe(MAX_DURATION_MS);
    expect(policy.readMs).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(policy.warnings?.map((w) => w.code)).toEqual([
      'DEADLINE_BELOW_ONE_ATTEMPT',
      'READ_TIMEOUT_CLAMPED',
    ]);
    expect(policy.warning?.code).toBe('DEADLINE_BELOW_ONE_ATTEMPT');
    expect(policy.warnings?.[1]?.message).toMatch(/2800000000 ms .* 2147483647 ms/);
  });

  it('never gives a connect timeout longer than the read timeout: clamps it and says so with CONNECT_TIMEOUT_CLAMPED', () => {
    const policy = calibrateTimeout({ p99Ms: 100, userDeadlineMs: 1500, connectP99Ms: 250 });
    expect(policy).toMatchObject({
      connectMs: 140,
      readMs: 140,
      attempts: 2,
      warning: { code: 'CONNECT_TIMEOUT_CLAMPED' },
    });
    expect(policy.warnings?.map((w) => w.code)).toEqual(['CONNECT_TIMEOUT_CLAMPED']);
    expect(policy.warning?.message).toContain('350 ms');
  });

  it('lists no warning when nothing was changed', () => {
    expect(calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }).warnings).toEqual([]);
  });

  describe('rejects invalid input with an error naming the option', () => {
    const cases: Array<[string, () => unknown, string]> = [
      ['NaN p99', () => calibrateTimeout({ p99Ms: Number.NaN, userDeadlineMs: 1500 }), 'p99Ms'],
      ['zero p99', () => calibrateTimeout({ p99Ms: 0, userDeadlineMs: 1500 }), 'p99Ms'],
      ['negative deadline', () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: -1 }), 'userDeadlineMs'],
      [
        'infinite deadline',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: Infinity }),
        'userDeadlineMs',
      ],
      [
        'fractional attempts',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, attempts: 1.5 }),
        'attempts',
      ],
      [
        'zero attempts',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, attempts: 0 }),
        'attempts',
      ],
      [
        'connect p99 of 0',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500, connectP99Ms: 0 }),
        'connectP99Ms',
      ],
      ['slack of 1', () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }, { slack: 1 }), 'slack'],
      [
        'slack below 1',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }, { slack: 0.9 }),
        'slack',
      ],
      ['absurd slack', () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }, { slack: 10 }), 'slack'],
      [
        'zero connect cap',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }, { connectCapMs: 0 }),
        'connectCapMs',
      ],
      [
        'negative overhead',
        () => calibrateTimeout({ p99Ms: 180, userDeadlineMs: 1500 }, { overheadPerAttemptMs: -1 }),
        'overheadPerAttemptMs',
      ],
      [
        'string p99',
        () => calibrateTimeout({ p99Ms: '180' as unknown as number, userDeadlineMs: 1500 }),
        'p99Ms',
      ],
    ];
    for (const [name, run, option] of cases) {
      it(name, () => {
        try {
          run();
          expect.unreachable('should have thrown');
        } catch (error) {
          expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
          expect((error as { option: string }).option).toBe(option);
          expect((error as Error).message).toContain(`\`${option}\``);
        }
      });
    }
  });

  describe('properties', () => {
    const profile = fc.record({
      p99Ms: fc.double({ min: 0.01, max: 600_000, noNaN: true }),
      userDeadlineMs: fc.double({ min: 0.01, max: 3_600_000, noNaN: true }),
      attempts: fc.integer({ min: 1, max: 100 }),
    });
    const options = fc.record({
      slack: fc.double({ min: 1.000001, max: 3, noNaN: true }),
      overheadPerAttemptMs: fc.double({ min: 0, max: 1000, noNaN: true }),
      connectCapMs: fc.double({ min: 0.01, max: 10_000, noNaN: true }),
    });

    it('never arms a timer above 2^31−1 ms nor a connect timeout above the read timeout, and warns whenever it clamps', () => {
      const anyProfile = fc.record({
        p99Ms: fc.double({ min: 0.01, max: MAX_DURATION_MS, noNaN: true }),
        userDeadlineMs: fc.double({ min: 0.01, max: MAX_DURATION_MS, noNaN: true }),
        connectP99Ms: fc.double({ min: 0.01, max: MAX_DURATION_MS, noNaN: true }),
      });
      fc.assert(
        fc.property(anyProfile, options, (p, o) => {
          const policy = calibrateTimeout(p, o);
          const codes = policy.warnings?.map((w) => w.code) ?? [];
          expect(policy.readMs).toBeLessThanOrEqual(MAX_DURATION_MS);
          expect(policy.connectMs).toBeLessThanOrEqual(policy.readMs);
          expect(codes.includes('READ_TIMEOUT_CLAMPED')).toBe(Math.ceil(p.p99Ms * o.slack) > MAX_DURATION_MS);
          const wantedConnect = Math.min(o.connectCapMs, Math.ceil(p.connectP99Ms * o.slack));
          expect(codes.includes('CONNECT_TIMEOUT_CLAMPED')).toBe(wantedConnect > policy.readMs);
          expect(policy.warning).toEqual(policy.warnings?.[0] ?? null);
        }),
        { numRuns: 2000 },
      );
    });

    it('never sets the read timeout below p99 × slack', () => {
      fc.assert(
        fc.property(profile, options, (p, o) => calibrateTimeout(p, o).readMs >= p.p99Ms * o.slack),
        { numRuns: 2000 },
      );
    });

    it('fits every attempt and its overhead into the deadline when there is no warning', () => {
      fc.assert(
        fc.property(profile, options, (p, o) => {
          const policy = calibrateTimeout(p, o);
          if (policy.warning !== null) return true;
          return (
            policy.attempts === p.attempts &&
            policy.attempts * (policy.readMs + o.overheadPerAttemptMs) <= p.userDeadlineMs
          );
        }),
        { numRuns: 2000 },
      );
    });

    it('always keeps at least one attempt and never more than requested', () => {
      fc.assert(
        fc.property(profile, options, (p, o) => {
          const policy = calibrateTimeout(p, o);
          return policy.attempts >= 1 && policy.attempts <= p.attempts;
        }),
        { numRuns: 2000 },
      );
    });

    it('warns whenever the attempts were reduced, and the reduced attempts fit unless none does', () => {
      fc.assert(
        fc.property(profile, options, (p, o) => {
          const policy = calibrateTimeout(p, o);
          const used = policy.attempts * (policy.readMs + o.overheadPerAttemptMs);
          if (policy.warning === null) return policy.attempts === p.attempts;
          if (policy.warning.code === 'ATTEMPTS_REDUCED') return used <= p.userDeadlineMs;
          return policy.attempts === 1 && used > p.userDeadlineMs;
        }),
        { numRuns: 2000 },
      );
    });

    it('keeps the connect timeout within its cap', () => {
      fc.assert(
        fc.property(profile, options, (p, o) => calibrateTimeout(p, o).connectMs <= o.connectCapMs),
        { numRuns: 1000 },
      );
    });
  });
});

describe('readTimeoutMs', () => {
  it('is p99 × slack rounded up to a whole millisecond', () => {
    expect(readTimeoutMs(180)).toBe(252);
    expect(readTimeoutMs(100, 1.33)).toBe(133);
    expect(readTimeoutMs(0.5, 1.3)).toBe(1);
  });
});
