import { createRandom } from '@prazo/lab/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { ADAPTIVE_THROTTLE_DEFAULTS, createAdaptiveThrottle } from './adaptive-throttle.js';

/**
 * `rate` calls per second for `seconds`, to a dependency that accepts at most `capacity(t)` per
 * second (a token bucket) and rejects the rest. Returns the calls sent and accepted per second.
 */
function drive(opts: {
  rate: number;
  seconds: number;
  capacity: (t: number) => number;
  k?: number;
  windowMs?: number;
  countRejected?: boolean;
}): Array<{ sent: number; accepted: number; offered: number }> {
  const throttle = createAdaptiveThrottle({
    k: opts.k ?? 2,
    windowMs: opts.windowMs ?? 10_000,
    countRejected: opts.countRejected ?? false,
  });
  const random = createRandom(7);
  const out: Array<{ sent: number; accepted: number; offered: number }> = [];
  const stepMs = 1000 / opts.rate;
  let tokens = 0;
  for (let s = 0; s < opts.seconds; s++) {
    const second = { sent: 0, accepted: 0, offered: 0 };
    for (let i = 0; i < opts.rate; i++) {
      const t = s * 1000 + i * stepMs;
      tokens = Math.min(opts.capacity(t), tokens + (opts.capacity(t) * stepMs) / 1000);
      second.offered++;
      if (throttle.reject(t, random()) > 0) continue;
      second.sent++;
      const accepted = tokens >= 1;
      if (accepted) {
        tokens -= 1;
        second.accepted++;
      }
      throttle.record(accepted, t);
    }
    out.push(second);
  }
  return out;
}

/** The recovery time docs/overload.md states, in ms, plus one second of the simulation's granularity. */
function recoveryBoundMs(windowMs: number, k: number, acceptedShare: number): number {
  return windowMs * (1 + Math.log(Math.max(1, 1 / (k * acceptedShare))) / k) + 1000;
}

describe('createAdaptiveThrottle', () => {
  it('never rejects while the dependency accepts everything', () => {
    const throttle = createAdaptiveThrottle();
    for (let t = 0; t < 20_000; t += 3) {
      expect(throttle.reject(t, 0)).toBe(0);
      throttle.record(true, t);
    }
    expect(throttle.state(20_000).probability).toBe(0);
  });

  it('computes max(0, (requests − K × accepts) / (requests + 1)) over the window', () => {
    const throttle = createAdaptiveThrottle({ k: 2, windowMs: 1000, bucketCount: 10, countRejected: true });
    for (let i = 0; i < 9; i++) throttle.record(false, 10);
    throttle.record(true, 10);
    expect(throttle.state(10)).toEqual({ requests: 10, accepts: 1, probability: 8 / 11 });
    // A local rejection counts as a request.
    expect(throttle.reject(20, 0)).toBe(8 / 11);
    expect(throttle.state(20).requests).toBe(11);
    expect(throttle.reject(20, 0.99)).toBe(0);
    // Everything leaves the window after windowMs.
    expect(throttle.state(1200)).toEqual({ requests: 0, accepts: 0, probability: 0 });
  });

  it('does not count a local rejection by default', () => {
    const throttle = createAdaptiveThrottle({ k: 2, windowMs: 1000, bucketCount: 10 });
    for (let i = 0; i < 9; i++) throttle.record(false, 10);
    throttle.record(true, 10);
    expect(throttle.reject(20, 0)).toBe(8 / 11);
    expect(throttle.state(20)).toEqual({ requests: 10, accepts: 1, probability: 8 / 11 });
  });

  it('with countRejected, sends about K × the accepted rate when the dependency can accept 10 % of the offered calls', () => {
    for (const k of [1.5, 2, 3]) {
      const seconds = drive({ rate: 200, seconds: 60, capacity: () => 20, k, countRejected: true });
      const steady = seconds.slice(20);
      const sent = steady.reduce((n, s) => n + s.sent, 0);
      const accepted = steady.reduce((n, s) => n + s.accepted, 0);
      expect(sent / accepted, `K ${k}`).toBeGreaterThan(k * 0.85);
      expect(sent / accepted, `K ${k}`).toBeLessThan(k * 1.15);
    }
  });

  it('by default, sends about √(K × offered ÷ accepted) × the accepted rate at an overload', () => {
    for (const [k, rate] of [
      [2, 60],
      [2, 200],
      [3, 200],
    ] as const) {
      const seconds = drive({ rate, seconds: 60, capacity: () => 20, k });
      const steady = seconds.slice(20);
      const sent = steady.reduce((n, s) => n + s.sent, 0);
      const accepted = steady.reduce((n, s) => n + s.accepted, 0);
      const expected = Math.sqrt((k * rate) / 20);
      expect(sent / accepted, `K ${k}, ${rate}/s`).toBeGreaterThan(expected * 0.8);
      expect(sent / accepted, `K ${k}, ${rate}/s`).toBeLessThan(expected * 1.2);
    }
  });

  it('by default, probes a dead dependency at about √(offered per window) per window and reopens within 2 s of its return', () => {
    const seconds = drive({ rate: 25, seconds: 40, capacity: (t) => (t < 20_000 ? 0 : 1e9) });
    // 10 s into the outage: √(25 × 10) ≈ 16 requests per 10 s window still go out.
    const probes = seconds.slice(10, 20).reduce((n, s) => n + s.sent, 0);
    expect(probes).toBeGreaterThan(8);
    expect(probes).toBeLessThan(32);
    const full = seconds.findIndex((s, i) => i >= 20 && s.sent === s.offered);
    expect(full - 20).toBeLessThanOrEqual(2);
    expect(seconds.slice(full).every((s) => s.sent === s.offered)).toBe(true);
  });

  it('with countRejected, reopens only slowly after an outage (the reason it is not the default)', () => {
    const seconds = drive({
      rate: 25,
      seconds: 60,
      capacity: (t) => (t < 20_000 ? 0 : 1e9),
      countRejected: true,
    });
    const full = seconds.findIndex((s, i) => i >= 20 && s.sent === s.offered);
    expect(full === -1 || full - 20 > 10).toBe(true);
  });

  it('with countRejected, returns to sending every call within the documented time once the dependency accepts again', () => {
    const windowMs = 10_000;
    const seconds = drive({
      rate: 200,
      seconds: 60,
      capacity: (t) => (t < 30_000 ? 20 : 1e9),
      windowMs,
      countRejected: true,
    });
    const full = seconds.findIndex((s, i) => i >= 30 && s.sent === s.offered);
    expect(full).toBeGreaterThan(30);
    expect((full - 30) * 1000).toBeLessThanOrEqual(recoveryBoundMs(windowMs, 2, 0.1));
    expect(seconds.slice(full).every((s) => s.sent === s.offered)).toBe(true);
  });

  it('with countRejected, recovers within windowMs × (1 + ln(1 / (K × accepted share)) / K) from 95 % rejection or less (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 90 }),
        fc.double({ min: 2, max: 4, noNaN: true }),
        fc.integer({ min: 2_000, max: 10_000 }),
        (capacity, k, windowMs) => {
          const seconds = drive({
            rate: 100,
            seconds: 20 + Math.ceil(recoveryBoundMs(windowMs, k, capacity / 100) / 1000) + 3,
            capacity: (t) => (t < 20_000 ? capacity : 1e9),
            k,
            windowMs,
            countRejected: true,
          });
          const from = 20 + Math.ceil(recoveryBoundMs(windowMs, k, capacity / 100) / 1000);
          expect(seconds.slice(from).every((s) => s.sent === s.offered)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps the probability in [0, 1) whatever it is fed, and ignores a clock going back (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.oneof(fc.integer({ min: -500, max: 500 }), fc.constant(Number.NaN)),
            op: fc.constantFrom('accept', 'reject', 'local'),
            r: fc.double({ min: 0, max: 0.999, noNaN: true }),
          }),
          { maxLength: 300 },
        ),
        (ops) => {
          const throttle = createAdaptiveThrottle({ windowMs: 1000, bucketCount: 7 });
          let t = 1000;
          for (const op of ops) {
            t += op.dt;
            if (op.op === 'local') throttle.reject(t, op.r);
            else throttle.record(op.op === 'accept', t);
            const state = throttle.state(t);
            expect(state.probability).toBeGreaterThanOrEqual(0);
            expect(state.probability).toBeLessThan(1);
            expect(state.accepts).toBeLessThanOrEqual(state.requests);
            expect(state.accepts).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });

  it('uses K = 2 and a 10 s window by default and refuses unusable options, naming them', () => {
    expect(ADAPTIVE_THROTTLE_DEFAULTS).toEqual({
      k: 2,
      windowMs: 10_000,
      bucketCount: 50,
      countRejected: false,
    });
    for (const [options, option] of [
      [{ countRejected: 'yes' as unknown as boolean }, 'countRejected'],
      [{ k: 0.5 }, 'k'],
      [{ k: Number.NaN }, 'k'],
      [{ windowMs: 0 }, 'windowMs'],
      [{ bucketCount: 0 }, 'bucketCount'],
    ] as const) {
      expect(() => createAdaptiveThrottle(options)).toThrow(InvalidOptionError);
      try {
        createAdaptiveThrottle(options);
      } catch (error) {
        expect((error as InvalidOptionError).option).toBe(option);
      }
    }
  });
});
