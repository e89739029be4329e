import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, isPrazoError } from '../errors.js';
import { BALANCER_DEFAULTS, normalizeBalancerOptions } from './balancer-options.js';

describe('normalizeBalancerOptions', () => {
  it('applies every default', () => {
    const { random, ...rest } = normalizeBalancerOptions();
    expect(rest).toEqual(BALANCER_DEFAULTS);
    expect(random).toBe(Math.random);
    expect(Object.isFrozen(BALANCER_DEFAULTS)).toBe(true);
  });

  it.each([
    [{ decayMs: 0 }, /`balancer.decayMs` to be a finite number of ms > 0/],
    [{ consecutiveFailures: 1.5 }, /`balancer.consecutiveFailures` to be an integer from 1 to 1000/],
    [{ failureWindowRequests: 33 }, /`balancer.failureWindowRequests` to be an integer from 2 to 32/],
    [{ failureRatio: 0 }, /`balancer.failureRatio` to be a number > 0 and ≤ 1/],
    [{ failureRatioOverPeers: 0.5 }, /`balancer.failureRatioOverPeers` to be a finite number ≥ 1/],
    [{ maxEjectionMs: 5_000 }, /`balancer.maxEjectionMs` to be at least baseEjectionMs \(10000\)/],
    [{ maxEjectionFraction: 1.5 }, /`balancer.maxEjectionFraction`/],
    [{ panicThreshold: -0.1 }, /`balancer.panicThreshold` to be a number from 0 to 1/],
    [{ slowStartMs: Number.NaN }, /`balancer.slowStartMs` to be a finite number of ms ≥ 0/],
    [{ random: 4 }, /`balancer.random` to be a function/],
    [{ onTransition: 'log' }, /`balancer.onTransition` to be a function/],
  ])('rejects %j naming the option', (options, message) => {
    expect(() => normalizeBalancerOptions(options as never)).toThrow(message);
  });

  it('either accepts any options object or throws INVALID_OPTION', () => {
    const value = fc.oneof(
      fc.double(),
      fc.integer({ min: -5, max: 50 }),
      fc.constant(undefined),
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.record(
          Object.fromEntries(Object.keys(BALANCER_DEFAULTS).map((k) => [k, value])) as Record<
            string,
            typeof value
          >,
          { requiredKeys: [] },
        ),
        (options) => {
          try {
            normalizeBalancerOptions(options as never);
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidOptionError);
            expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
          }
        },
      ),
    );
  });
});
