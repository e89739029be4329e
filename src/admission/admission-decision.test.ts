import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRITICALITY_LEVELS } from '../wire/criticality-header.js';
import { type ArrivalState, decideArrival, moreCritical, refusalStatus } from './admission-decision.js';

const calm: ArrivalState = {
  remainingMs: 1000,
  expectedMs: 50,
  criticality: 'default',
  inFlight: 0,
  maxInFlight: 4,
  queueLength: 0,
  maxQueue: 16,
  sheddableQueue: 8,
  overloaded: false,
  leastWaiting: undefined,
};
const busy: ArrivalState = { ...calm, inFlight: 4, queueLength: 2, leastWaiting: 'default' };

describe('decideArrival', () => {
  it('runs a request that fits its deadline when a slot is free', () => {
    expect(decideArrival(calm)).toBe('run');
  });

  it('refuses a request whose remaining deadline is below the expected service time', () => {
    expect(decideArrival({ ...calm, remainingMs: 49 })).toBe('insufficient');
    expect(decideArrival({ ...calm, remainingMs: 50 })).toBe('run');
  });

  it('admits anything with time left while the route has too few samples', () => {
    expect(decideArrival({ ...calm, remainingMs: 1, expectedMs: undefined })).toBe('run');
  });

  it('calls a request with no time left expired', () => {
    expect(decideArrival({ ...calm, remainingMs: 0, expectedMs: undefined })).toBe('expired');
  });

  it('queues when every slot is busy, and never lets an arrival overtake waiting work', () => {
    expect(decideArrival(busy)).toBe('queue');
    expect(decideArrival({ ...busy, inFlight: 1 })).toBe('queue');
  });

  it('sheds sheddable work once the queue is half full or overloaded, not default work', () => {
    expect(decideArrival({ ...busy, criticality: 'sheddable' })).toBe('queue');
    expect(decideArrival({ ...busy, criticality: 'sheddable', queueLength: 8 })).toBe('shed');
    expect(decideArrival({ ...busy, criticality: 'sheddable', overloaded: true })).toBe('shed');
    expect(decideArrival({ ...busy, queueLength: 8, overloaded: true })).toBe('queue');
  });

  it('refuses on a full queue unless less critical work waits there', () => {
    const full = { ...busy, queueLength: 16 };
    expect(decideArrival(full)).toBe('queue-full');
    expect(decideArrival({ ...full, criticality: 'critical' })).toBe('queue');
    expect(decideArrival({ ...full, leastWaiting: 'sheddable' })).toBe('queue');
    expect(decideArrival({ ...full, criticality: 'critical', leastWaiting: 'critical' })).toBe('queue-full');
  });

  it('never refuses for load when a slot is free and nobody waits, whatever the criticality', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CRITICALITY_LEVELS),
        fc.boolean(),
        fc.integer({ min: 0, max: 3 }),
        (criticality, overloaded, inFlight) => {
          expect(decideArrival({ ...calm, criticality, overloaded, inFlight })).toBe('run');
        },
      ),
    );
  });

  it('never sheds more critical work where it would queue less critical work', () => {
    const state = fc.record({
      inFlight: fc.integer({ min: 0, max: 6 }),
      queueLength: fc.integer({ min: 0, max: 20 }),
      overloaded: fc.boolean(),
      leastWaiting: fc.constantFrom(undefined, ...CRITICALITY_LEVELS),
    });
    fc.assert(
      fc.property(
        state,
        fc.constantFrom(...CRITICALITY_LEVELS),
        fc.constantFrom(...CRITICALITY_LEVELS),
        (s, a, b) => {
          if (!moreCritical(a, b)) return;
          const lower = decideArrival({ ...calm, ...s, criticality: b });
          const higher = decideArrival({ ...calm, ...s, criticality: a });
          if (lower === 'run' || lower === 'queue') expect(['run', 'queue']).toContain(higher);
        },
      ),
    );
  });
});

describe('refusalStatus', () => {
  it('answers 504 when the deadline is the problem and 503 when the load is', () => {
    expect(refusalStatus('expired')).toBe(504);
    expect(refusalStatus('insufficient')).toBe(504);
    expect(refusalStatus('queue-expired')).toBe(504);
    expect(refusalStatus('queue-full')).toBe(503);
    expect(refusalStatus('shed')).toBe(503);
    expect(refusalStatus('queue-delay')).toBe(503);
  });
});
