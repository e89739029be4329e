import { describe, expect, it } from 'vitest';
import { currentCriticality, withCriticality } from '../deadline/criticality-context.js';
import { cancelDeadline, Deadline } from '../deadline/deadline.js';
import { CancelledError, InvalidOptionError } from '../errors.js';
import { createFakeClock, type FakeClock } from '../testing/fake-clock.js';
import type { Criticality } from '../wire/criticality-header.js';
import { type AdmissionTicket, createAdmission, type Refusal } from './admission.js';

const T0 = 1_700_000_000_000;

interface Offered {
  name: string;
  ticket?: AdmissionTicket;
  refusal?: Refusal;
  deadline: Deadline;
}

/** A fake-clock harness: offers requests and remembers what happened to each. */
function harness(options: Parameters<typeof createAdmission>[0] = {}) {
  const clock: FakeClock = createFakeClock(T0);
  const admission = createAdmission({ clock, ...options });
  const ran: string[] = [];
  const offer = (
    name: string,
    deadlineMs = 1000,
    criticality: Criticality = 'default',
    route = 'GET /x',
  ): Offered => {
    const offered: Offered = { name, deadline: Deadline.after(deadlineMs, clock) };
    admission.offer(
      route,
      offered.deadline,
      criticality,
      (ticket) => {
        ran.push(name);
        offered.ticket = ticket;
      },
      (refusal) => {
        offered.refusal = refusal;
      },
    );
    return offered;
  };
  /** Runs `n` requests of `serviceMs` one after the other, to teach the route its service time. */
  const teach = (n: number, serviceMs: number, route = 'GET /x'): void => {
    for (let i = 0; i < n; i++) {
      const r = offer(`teach${i}`, 10_000, 'default', route);
      clock.advance(serviceMs);
      r.ticket!.release(true);
      r.deadline.dispose();
    }
    ran.length = 0;
  };
  return { clock, admission, offer, teach, ran };
}

describe('createAdmission', () => {
  it('admits everything with time left while the route has too few samples', () => {
    const { offer } = harness();
    expect(offer('a', 1).ticket).toBeDefined();
  });

  it("refuses with 504 a request whose remaining deadline is below the route's median service time", () => {
    const { clock, offer, teach } = harness({ minSamples: 5 });
    teach(10, 100);
    clock.advance(1000); // past the refresh period
    const short = offer('short', 60);
    expect(short.ticket).toBeUndefined();
    expect(short.refusal).toMatchObject({
      reason: 'insufficient',
      status: 504,
      route: 'GET /x',
      remainingMs: 60,
    });
    expect(short.refusal?.expectedMs).toBeCloseTo(100, -1);
    expect(short.refusal?.retryAfterSeconds).toBeUndefined();
    expect(offer('long', 150).ticket).toBeDefined();
    expect(offer('other route', 60, 'default', 'GET /y').ticket).toBeDefined();
  });

  it('queues beyond the in-flight limit and runs the next request when a slot frees', () => {
    const { clock, admission, offer, ran } = harness({ maxInFlight: 2 });
    const a = offer('a');
    offer('b');
    const c = offer('c');
    expect(ran).toEqual(['a', 'b']);
    expect(admission.queueLength).toBe(1);
    clock.advance(3);
    a.ticket!.release(true);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(c.refusal).toBeUndefined();
    expect(admission.inFlight).toBe(2);
    expect(admission.sojourn.count(0)).toBe(1);
    a.ticket!.release(true); // idempotent
    expect(admission.inFlight).toBe(2);
  });

  it('resumes a queued request in its own async context', () => {
    const { admission, clock } = harness({ maxInFlight: 1 });
    const first = Deadline.after(1000, clock);
    let ticket: AdmissionTicket | undefined;
    admission.offer(
      'r',
      first,
      'default',
      (t) => {
        ticket = t;
      },
      () => {},
    );
    let seen: Criticality | undefined;
    withCriticality('critical', () =>
      admission.offer(
        'r',
        Deadline.after(1000, clock),
        'critical',
        () => {
          seen = currentCriticality();
        },
        () => {},
      ),
    );
    ticket!.release(true);
    expect(seen).toBe('critical');
  });

  it('answers a queued request whose deadline passes at once, with 504, and never runs it', () => {
    const { clock, admission, offer, ran } = harness({ maxInFlight: 1 });
    const a = offer('a', 5000);
    const b = offer('b', 200);
    clock.advance(200);
    expect(b.refusal).toMatchObject({ reason: 'queue-expired', status: 504, queuedMs: 200 });
    expect(admission.queueLength).toBe(0);
    a.ticket!.release(true);
    expect(ran).toEqual(['a']);
  });

  it('forgets a queued request whose client went away, without answering it', () => {
    const { admission, offer, ran } = harness({ maxInFlight: 1 });
    const a = offer('a');
    const b = offer('b');
    cancelDeadline(b.deadline, new CancelledError('gone'));
    expect(admission.queueLength).toBe(0);
    expect(b.refusal).toBeUndefined();
    a.ticket!.release(true);
    expect(ran).toEqual(['a']);
  });

  it('refuses a queued request whose remaining time fell below the service time while it waited', () => {
    const { clock, offer, teach } = harness({ maxInFlight: 1, minSamples: 5 });
    teach(10, 100);
    clock.advance(1000);
    const a = offer('a', 5000);
    const b = offer('b', 250);
    clock.advance(200);
    a.ticket!.release(true);
    expect(b.refusal).toMatchObject({ reason: 'insufficient', status: 504, remainingMs: 50 });
  });

  it('sheds sheddable work once the queue is half full, with 503 and Retry-After', () => {
    const { offer } = harness({ maxInFlight: 1, maxQueue: 4 });
    offer('busy');
    offer('q1');
    offer('q2');
    expect(offer('s', 1000, 'sheddable').refusal).toMatchObject({
      reason: 'shed',
      status: 503,
      retryAfterSeconds: 1,
    });
    expect(offer('q3').refusal).toBeUndefined();
  });

  it('lets critical work push the newest less critical request out of a full queue', () => {
    const { offer } = harness({ maxInFlight: 1, maxQueue: 2 });
    offer('busy');
    const d1 = offer('d1');
    const d2 = offer('d2');
    expect(offer('d3').refusal).toMatchObject({ reason: 'queue-full', status: 503 });
    const c = offer('c', 1000, 'critical');
    expect(c.refusal).toBeUndefined();
    expect(d2.refusal).toMatchObject({ reason: 'shed', status: 503 });
    expect(d1.refusal).toBeUndefined();
  });

  it('under a standing queue switches to LIFO, drops long waits with 503 and reports the change', () => {
    const { clock, admission, offer, ran } = harness({ maxInFlight: 1, maxQueue: 100 });
    const changes: boolean[] = [];
    admission.on('overload', (e) => changes.push(e.overloaded));
    const all = new Map<string, Offered>();
    all.set('r0', offer('r0'));
    // One slot, 20 ms per request, a new request every 10 ms: twice what the slot can serve.
    for (let t = 1; t <= 40; t++) {
      clock.advance(10);
      if (t % 2 === 0) all.get(ran[ran.length - 1]!)!.ticket!.release(true);
      all.set(`w${t}`, offer(`w${t}`));
    }
    expect(changes[0]).toBe(true);
    const dropped = [...all.values()].filter((w) => w.refusal?.reason === 'queue-delay');
    expect(dropped.length).toBeGreaterThan(5);
    for (const d of dropped) expect(d.refusal).toMatchObject({ status: 503, retryAfterSeconds: 1 });
    expect(dropped.every((d) => d.refusal!.queuedMs > 5)).toBe(true);
    // The queue does not grow with the overload: what cannot be served soon is answered.
    expect(admission.queueLength).toBeLessThan(4);
    expect(ran.length + dropped.length + admission.queueLength).toBe(all.size);
  });

  it('sheds sheddable arrivals at once while the queue is overloaded', () => {
    const { clock, admission, offer } = harness({ maxInFlight: 1, maxQueue: 100 });
    offer('busy');
    offer('w1');
    clock.advance(150);
    offer('w2'); // the first interval saw a request run without waiting: calm
    expect(admission.overloaded).toBe(false);
    clock.advance(150);
    offer('w3'); // a whole interval with the queue never empty and nothing leaving it
    expect(admission.overloaded).toBe(true);
    expect(offer('s', 1000, 'sheddable').refusal?.reason).toBe('shed');
    expect(offer('d').refusal).toBeUndefined();
  });

  it('counts admissions and refusals by route, reason and criticality', () => {
    const { admission, offer } = harness({ maxInFlight: 1, maxQueue: 1 });
    offer('a', 1000, 'critical');
    offer('b');
    offer('c');
    admission.countExpired('GET /x', 'sheddable');
    const [route] = [...admission.routes()];
    expect(route?.key).toBe('GET /x');
    expect([...route!.admitted]).toEqual([1, 0, 0]);
    expect(route!.refused.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('reports a listener that throws as a warning and goes on', async () => {
    const { admission, offer } = harness({ maxInFlight: 1, maxQueue: 0 });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    admission.on('refused', () => {
      throw new Error('boom');
    });
    offer('a');
    const b = offer('b');
    expect(b.refusal?.reason).toBe('queue-full');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings).toEqual(["prazo admission: a 'refused' listener threw: Error: boom"]);
  });

  it('validates its options, naming the option', () => {
    expect(() => createAdmission({ maxInFlight: 0 })).toThrow(InvalidOptionError);
    expect(() => createAdmission({ serviceTimePercentile: 0 })).toThrow(/serviceTimePercentile/);
    expect(() => createAdmission({ codelTargetMs: 10, codelIntervalMs: 5 })).toThrow(/codelIntervalMs/);
    expect(() => createAdmission({ maxQueue: 5 })).toThrow(/maxQueue/);
    expect(() => createAdmission({ retryAfterSeconds: 0.5 })).toThrow(/retryAfterSeconds/);
    expect(createAdmission({ maxInFlight: 8 }).options).toMatchObject({ maxQueue: 32, sheddableQueue: 16 });
    expect(createAdmission().options).toMatchObject({ maxInFlight: Number.POSITIVE_INFINITY, maxQueue: 0 });
  });
});
