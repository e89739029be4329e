import { describe, expect, it } from 'vitest';
import { createStatsCounter, parseDeadline } from './double-stats.js';

const request = (headers: Record<string, string> = {}, method = 'GET', url = '/x') => ({
  method,
  url,
  headers,
});

describe('stats counter', () => {
  it('counts originals, retries and hedges from the attempt header', () => {
    const counter = createStatsCounter(10);
    counter.arrive(request({ 'x-prazo-attempt': '1;kind=original' }), 0);
    counter.arrive(request({ 'x-prazo-attempt': '2;kind=retry' }), 0);
    counter.arrive(request({ 'x-prazo-attempt': '2;kind=hedge' }), 0);
    counter.arrive(request({ 'x-prazo-attempt': '3;kind=hedge' }), 0);
    const stats = counter.snapshot();
    expect([stats.received, stats.originals, stats.retries, stats.hedges, stats.unknownKind]).toEqual([
      4, 1, 1, 2, 0,
    ]);
  });

  it('counts a request without a readable attempt header as an original of unknown kind', () => {
    const counter = createStatsCounter(10);
    counter.arrive(request(), 0);
    counter.arrive(request({ 'x-prazo-attempt': 'garbage' }), 0);
    const stats = counter.snapshot();
    expect([stats.originals, stats.unknownKind]).toEqual([2, 2]);
  });

  it('counts a request that arrives at or after its deadline as work for nobody', () => {
    const counter = createStatsCounter(10);
    counter.arrive(request({ 'x-deadline-epoch-ms': '1000' }), 999);
    counter.arrive(request({ 'x-deadline-epoch-ms': '1000' }), 1000);
    counter.arrive(request({ 'x-deadline-epoch-ms': '1000' }), 1500);
    counter.arrive(request({ 'x-deadline-epoch-ms': 'soon' }), 1500);
    expect(counter.snapshot().afterDeadline).toBe(2);
  });

  it('tracks requests in flight and the peak', () => {
    const counter = createStatsCounter(0);
    counter.arrive(request(), 0);
    counter.arrive(request(), 0);
    counter.leave();
    expect(counter.snapshot()).toMatchObject({ inFlight: 1, maxInFlight: 2 });
  });

  it('counts by status and method, and repeated idempotency keys', () => {
    const counter = createStatsCounter(0);
    counter.arrive(request({ 'idempotency-key': 'k1' }, 'POST'), 0);
    counter.arrive(request({ 'idempotency-key': 'k1' }, 'POST'), 0);
    counter.arrive(request({}, '__proto__'), 0);
    counter.status(503);
    counter.status(200);
    counter.status(503);
    const stats = counter.snapshot();
    expect(stats.byStatus).toEqual({ '200': 1, '503': 2 });
    expect(stats.byMethod).toEqual(
      Object.fromEntries([
        ['POST', 2],
        ['__proto__', 1],
      ]),
    );
    expect(Object.getPrototypeOf(stats.byMethod)).toBe(Object.prototype);
    expect(stats.idempotencyKeyRepeats).toBe(1);
  });

  it('keeps the last N request records, oldest first', () => {
    const counter = createStatsCounter(3);
    for (let i = 1; i <= 5; i++) {
      counter.arrive(
        request({
          'x-prazo-attempt': `${i};kind=retry`,
          'x-deadline-epoch-ms': '99',
          'idempotency-key': 'k',
        }),
        i,
      );
    }
    const records = counter.snapshot().requests;
    expect(records.map((r) => r.attempt)).toEqual([3, 4, 5]);
    expect(records[0]).toEqual({
      method: 'GET',
      path: '/x',
      attempt: 3,
      kind: 'retry',
      deadlineMs: 99,
      arrivedAtMs: 3,
      idempotencyKey: 'k',
    });
  });

  it('zeroes on reset but keeps what is still in flight', () => {
    const counter = createStatsCounter(3);
    counter.arrive(request(), 0);
    counter.status(200);
    counter.fault('hang');
    counter.reset();
    const stats = counter.snapshot();
    expect(stats).toMatchObject({ received: 0, inFlight: 1, maxInFlight: 1, byStatus: {}, requests: [] });
    expect(stats.faults.hang).toBe(0);
  });
});

describe('parseDeadline', () => {
  it.each([
    ['1700000000000', 1_700_000_000_000],
    [' 5 ', 5],
    ['-5', null],
    ['1e3', null],
    ['', null],
    [undefined, null],
    [['1', '2'], null],
  ])('reads %j as %j', (value, expected) => {
    expect(parseDeadline(value)).toBe(expected);
  });
});
