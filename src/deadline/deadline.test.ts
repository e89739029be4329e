import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { cancelDeadline, DEADLINE_HEADER, Deadline, onDeadlineExpired } from './deadline.js';

const T0 = 1_700_000_000_000;

describe('Deadline', () => {
  it('counts the time left down to zero and reports expiry at the limit', () => {
    const clock = createFakeClock(T0);
    const deadline = Deadline.after(1900, clock);
    expect(deadline.limitMs).toBe(T0 + 1900);
    expect(deadline.remainingMs()).toBe(1900);
    clock.advance(1899);
    expect(deadline.expired()).toBe(false);
    clock.advance(1);
    expect(deadline.expired()).toBe(true);
    clock.advance(500);
    expect(deadline.remainingMs()).toBe(0);
  });

  it('is an absolute instant: at() keeps the limit it was given', () => {
    const clock = createFakeClock(T0);
    expect(Deadline.at(T0 + 40, clock).remainingMs()).toBe(40);
    expect(Deadline.at(T0 - 40, clock).expired()).toBe(true);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1, '100' as unknown as number])(
    'rejects %p as an instant or a duration with INVALID_OPTION',
    (value) => {
      expect(() => Deadline.at(value)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option: 'epochMs' }),
      );
      expect(() => Deadline.after(value)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option: 'ms' }),
      );
    },
  );

  it('rejects something that is not a clock', () => {
    expect(() => Deadline.after(10, {} as never)).toThrow(/`clock`/);
  });

  it('writes the limit as whole epoch ms in x-deadline-epoch-ms', () => {
    const clock = createFakeClock(T0);
    expect(DEADLINE_HEADER).toBe('x-deadline-epoch-ms');
    expect(Deadline.at(T0 + 1900.7, clock).toHeaders()).toEqual({ 'x-deadline-epoch-ms': String(T0 + 1900) });
  });

  describe('signal', () => {
    it('arms no timer until the signal is read', () => {
      const clock = createFakeClock(T0);
      const deadline = Deadline.after(100, clock);
      expect(clock.pendingTimers()).toBe(0);
      void deadline.signal;
      expect(clock.pendingTimers()).toBe(1);
      expect(deadline.signal).toBe(deadline.signal);
      expect(clock.pendingTimers()).toBe(1);
    });

    it('aborts at the limit with DEADLINE_EXCEEDED, not before', () => {
      const clock = createFakeClock(T0);
      const { signal } = Deadline.after(100, clock);
      clock.advance(99);
      expect(signal.aborted).toBe(false);
      clock.advance(1);
      expect(signal.aborted).toBe(true);
      expect(isPrazoError(signal.reason, 'DEADLINE_EXCEEDED')).toBe(true);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('is already aborted when read after the limit', () => {
      const clock = createFakeClock(T0);
      const deadline = Deadline.after(10, clock);
      clock.advance(10);
      expect(deadline.signal.aborted).toBe(true);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('re-arms when its timer fires before the clock reaches the limit', () => {
      // A clock whose timers fire early (as real timers can against Date.now()).
      const clock = createFakeClock(T0);
      const early = {
        ...clock,
        setTimeout: (cb: () => void, ms: number) => clock.setTimeout(cb, Math.max(1, ms - 5)),
      };
      const { signal } = Deadline.after(100, early);
      clock.advance(95);
      expect(signal.aborted).toBe(false);
      expect(clock.pendingTimers()).toBe(1);
      clock.advance(5);
      expect(signal.aborted).toBe(true);
    });

    it('unrefs its timer so that it never keeps the process alive', () => {
      let unrefs = 0;
      const clock = createFakeClock(T0);
      const counting = {
        ...clock,
        setTimeout: (cb: () => void, ms: number) => {
          const timer = clock.setTimeout(cb, ms);
          return { unref: () => ++unrefs && timer, timer } as never;
        },
      };
      void Deadline.after(100, counting).signal;
      expect(unrefs).toBe(1);
    });

    it('releases its timer on dispose(), after which it no longer aborts at the limit', () => {
      const clock = createFakeClock(T0);
      const deadline = Deadline.after(100, clock);
      const { signal } = deadline;
      deadline.dispose();
      deadline.dispose();
      expect(clock.pendingTimers()).toBe(0);
      clock.advance(200);
      expect(signal.aborted).toBe(false);
      expect(deadline.expired()).toBe(true);
    });

    it('leaves no timer behind after 10 000 deadlines whose signal was read and disposed', () => {
      const clock = createFakeClock(T0);
      for (let i = 0; i < 10_000; i++) {
        const deadline = Deadline.after(1 + (i % 500), clock);
        void deadline.signal;
        deadline.dispose();
      }
      expect(clock.pendingTimers()).toBe(0);
    });

    it('can be cancelled by the server adapters, with the reason they give', () => {
      const clock = createFakeClock(T0);
      const deadline = Deadline.after(100, clock);
      const { signal } = deadline;
      const reason = new Error('client went away');
      cancelDeadline(deadline, reason);
      expect(signal.reason).toBe(reason);
      expect(clock.pendingTimers()).toBe(0);
    });
  });

  describe('tighten', () => {
    it('takes the earlier limit: a child can only tighten its parent', () => {
      const clock = createFakeClock(T0);
      const parent = Deadline.after(1000, clock);
      expect(parent.tighten(250).limitMs).toBe(T0 + 250);
      expect(parent.tighten(5000).limitMs).toBe(T0 + 1000);
      expect(parent.tighten(Deadline.after(300, clock)).limitMs).toBe(T0 + 300);
      expect(parent.tighten(Deadline.after(3000, clock)).limitMs).toBe(T0 + 1000);
      expect(parent.tighten(10).clock).toBe(clock);
    });

    it('rejects a duration that is not finite and >= 0', () => {
      expect(() => Deadline.after(10).tighten(-1)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    });

    it('rejects a deadline-like whose limitMs is NaN or a numeric string instead of returning a NaN limit', () => {
      const parent = Deadline.after(10);
      for (const limitMs of [Number.NaN, String(T0)])
        expect(() => parent.tighten({ limitMs } as unknown as Deadline)).toThrow(
          expect.objectContaining({ code: 'INVALID_OPTION', option: 'other.limitMs' }),
        );
    });
  });

  describe('fromHeaders', () => {
    const options = { defaultMs: 1000, maxMs: 5000 };

    it('reads Node headers, capped at the local maximum', () => {
      const clock = createFakeClock(T0);
      expect(
        Deadline.fromHeaders({ [DEADLINE_HEADER]: String(T0 + 1900) }, { ...options, clock }).limitMs,
      ).toBe(T0 + 1900);
      expect(
        Deadline.fromHeaders({ [DEADLINE_HEADER]: String(T0 + 60_000) }, { ...options, clock }).limitMs,
      ).toBe(T0 + 5000);
    });

    it('reads Fetch Headers, including a repeated header joined by commas', () => {
      const clock = createFakeClock(T0);
      const headers = new Headers();
      headers.append(DEADLINE_HEADER, String(T0 + 900));
      headers.append(DEADLINE_HEADER, String(T0 + 400));
      expect(Deadline.fromHeaders(headers, { ...options, clock }).limitMs).toBe(T0 + 400);
    });

    it('reads grpc-timeout when no absolute limit is sent', () => {
      const clock = createFakeClock(T0);
      expect(Deadline.fromHeaders({ 'grpc-timeout': '250m' }, { ...options, clock }).limitMs).toBe(T0 + 250);
    });

    it('gives the local default to garbage', () => {
      const clock = createFakeClock(T0);
      expect(Deadline.fromHeaders({ [DEADLINE_HEADER]: ['soon', '-3'] }, { ...options, clock }).limitMs).toBe(
        T0 + 1000,
      );
    });

    it('rejects unusable options with an error that names them', () => {
      expect(() => Deadline.fromHeaders({}, { defaultMs: 100, maxMs: -1 })).toThrow(/`maxMs`/);
    });

    it('never throws and never exceeds now + maxMs for any header record (10 000 cases)', () => {
      const clock = createFakeClock(T0);
      const value = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined));
      fc.assert(
        fc.property(value, value, fc.integer({ min: 1, max: 100_000 }), (deadline, grpc, maxMs) => {
          const parsed = Deadline.fromHeaders(
            { [DEADLINE_HEADER]: deadline, 'grpc-timeout': grpc },
            { defaultMs: 1000, maxMs, clock },
          );
          expect(parsed.limitMs).toBeLessThanOrEqual(T0 + maxMs);
        }),
        { numRuns: 10_000 },
      );
    });
  });
});

describe('onDeadlineExpired (the server adapters’ 504)', () => {
  it('runs at the limit before the signal aborts, with the error the signal aborts with', () => {
    const clock = createFakeClock(1_000);
    const deadline = Deadline.at(1_100, clock);
    const order: string[] = [];
    let hookError: unknown;
    onDeadlineExpired(deadline, (error) => {
      hookError = error;
      order.push(`hook:${deadline.signal.aborted}`);
    });
    deadline.signal.addEventListener('abort', () => order.push('signal'));
    expect(clock.pendingTimers()).toBe(1); // one timer for both
    clock.advance(99);
    expect(order).toEqual([]);
    clock.advance(1);
    expect(order).toEqual(['hook:false', 'signal']);
    expect(deadline.signal.reason).toBe(hookError);
    expect(isPrazoError(hookError, 'DEADLINE_EXCEEDED')).toBe(true);
  });

  it('needs no signal, and stops with dispose() or a cancellation', () => {
    const clock = createFakeClock(0);
    const fired: number[] = [];
    const a = Deadline.at(50, clock);
    onDeadlineExpired(a, () => fired.push(1));
    clock.advance(50);
    expect(fired).toEqual([1]);
    expect(clock.pendingTimers()).toBe(0);

    const b = Deadline.at(100, clock);
    onDeadlineExpired(b, () => fired.push(2));
    b.dispose();
    const c = Deadline.at(100, clock);
    onDeadlineExpired(c, () => fired.push(3));
    cancelDeadline(c, new Error('client went away'));
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(200);
    expect(fired).toEqual([1]);
  });
});
