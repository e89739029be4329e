import { createRandom } from '@prazo/lab/random';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { type Balancer, createBalancer } from './balancer.js';
import { BALANCER_DEFAULTS, type BalancerOptions } from './balancer-options.js';
import { type Behaviour, driveConcurrent, driveSequential } from './drive.test-helper.js';
import type { InstanceOutcome } from './instance-outcome.js';
import { slowStartShare } from './slow-start.js';

const A = 'http://127.0.0.1:8001';
const B = 'http://127.0.0.1:8002';
const C = 'http://127.0.0.1:8003';
const D = 'http://127.0.0.1:8004';

function setup(origins: string[], options: BalancerOptions = {}, seed = 1) {
  const random = createRandom(seed);
  const clock = createFakeClock(1_764_000_000_000);
  const balancer = createBalancer(origins, { random, ...options });
  return { balancer, clock, random };
}

/** A healthy instance: `baseMs` plus up to 30 % of seeded jitter. */
const healthy =
  (random: () => number, baseMs = 5) =>
  (): { outcome: InstanceOutcome; latencyMs: number } => ({
    outcome: 'success',
    latencyMs: baseMs * (1 + 0.3 * random()),
  });

/**
 * `origin` answers `consecutiveFailures` calls in a row: an instance that fails is ejected only
 * while another one answers cleanly (otherwise the whole fleet fails alike).
 */
function answerCleanly(balancer: Balancer, origin: string, nowMs: number): void {
  const i = balancer.indexOf(origin);
  for (let k = 0; k < BALANCER_DEFAULTS.consecutiveFailures; k++) balancer.finished(i, 'success', 5, nowMs);
}

const stateOf = (balancer: Balancer, origin: string, nowMs: number) =>
  balancer.snapshot(nowMs).instances.find((i) => i.origin === origin)!;

/**
 * A balancer over A, B and C whose transitions are written to `seen` as `B up→ejected reason`, with
 * B already ejected: it failed `consecutiveFailures` calls in a row while A answered cleanly.
 */
function withBEjected() {
  const seen: string[] = [];
  const { balancer, clock } = setup([A, B, C], {
    onTransition: (t) => seen.push(`${'ABCD'[[A, B, C, D].indexOf(t.origin)]} ${t.from}→${t.to} ${t.reason}`),
  });
  const [a, b, c] = [A, B, C].map((o) => balancer.indexOf(o)) as [number, number, number];
  answerCleanly(balancer, A, clock.now());
  for (let k = 0; k < BALANCER_DEFAULTS.consecutiveFailures; k++)
    balancer.finished(b, 'gateway', 1, clock.now());
  expect(stateOf(balancer, B, clock.now()).state).toBe('ejected');
  return { seen, balancer, clock, a, b, c };
}

describe('Balancer: latency', () => {
  it('sends a 150 ms slower instance at most 25 % of 60 sequential calls', () => {
    const { balancer, clock, random } = setup([A, B]);
    const fast = healthy(random, 5);
    const slow = healthy(random, 155);
    const behave: Behaviour = (origin) => (origin === B ? slow() : fast());
    const run = driveSequential(balancer, clock, behave, { calls: 60, attempts: 1 });
    expect(run.received(B) / 60).toBeLessThanOrEqual(0.25);
  });

  it('takes a timed-out attempt at twice its timeout in the latency estimate, an answer at its latency', () => {
    // A timeout says the attempt would have taken longer, not how much: at its timeout it would make
    // an instance that times out half the time look no slower than the timeout itself.
    const { balancer, clock } = setup([A, B]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    balancer.finished(a, 'success', 200, clock.now());
    balancer.finished(b, 'timeout', 200, clock.now());
    expect(stateOf(balancer, A, clock.now()).ewmaMs).toBeCloseTo(200, 5);
    expect(stateOf(balancer, B, clock.now()).ewmaMs).toBeCloseTo(400, 5);
  });

  it('sends a 150 ms slower instance at most 25 % of the calls at 32 in flight', () => {
    const { balancer, clock, random } = setup([A, B]);
    // The fast one slows down with its queue, as a real server does: 5 ms + 0.5 ms per call in flight.
    let inFastNow = 0;
    const behave: Behaviour = (origin) => {
      if (origin === B) return healthy(random, 155)();
      inFastNow = balancer.snapshot(clock.now()).instances.find((i) => i.origin === A)!.inFlight;
      return healthy(random, 5 + 0.5 * inFastNow)();
    };
    const run = driveConcurrent(balancer, clock, behave, { calls: 2_000, concurrency: 32 });
    expect(run.received(B) / 2_000).toBeLessThanOrEqual(0.25);
    expect(run.received(B)).toBeGreaterThan(0);
  });

  it.each([10, 100])(
    'spreads picks evenly over %i equally fast instances (one random draw per pick stays uniform)',
    (n) => {
      const origins = Array.from({ length: n }, (_, k) => `http://10.1.${k >> 8}.${k & 255}:80`);
      const { balancer, clock } = setup(origins);
      const counts = new Array<number>(n).fill(0);
      const picks = n * 1_000;
      for (let k = 0; k < picks; k++) {
        const i = balancer.pick(clock.now());
        counts[i]!++;
        clock.advance(0.1);
        balancer.finished(i, 'success', 5, clock.now());
      }
      // Each share within 5 standard deviations of 1/n (binomial, 1 000 expected picks each).
      const sd = Math.sqrt(1_000 * (1 - 1 / n));
      for (const c of counts) expect(Math.abs(c - 1_000)).toBeLessThan(5 * sd);
    },
  );

  it('keeps an unmeasured instance to one call in flight until its first answer', () => {
    const { balancer, clock } = setup([A]);
    const a = balancer.pick(clock.now());
    balancer.finished(a, 'success', 50, clock.now());
    balancer.add(B, clock.now() - BALANCER_DEFAULTS.slowStartMs); // past its slow start
    const picks = Array.from({ length: 20 }, () => balancer.pick(clock.now()));
    expect(picks.filter((i) => i === balancer.indexOf(B))).toHaveLength(1);
  });

  it('gives an instance whose estimate went stale one call at a time until it answers, not a burst', () => {
    const { balancer, clock } = setup([A, B]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    balancer.pickRetry([a], clock.now());
    balancer.finished(b, 'success', 400, clock.now());
    clock.advance(60_000); // B's 400 ms has decayed to 1 ms
    balancer.pickRetry([b], clock.now());
    balancer.finished(a, 'success', 5, clock.now());
    const picks = Array.from({ length: 20 }, () => balancer.pick(clock.now()));
    expect(picks.filter((i) => i === b)).toHaveLength(1);
  });

  it('tries a slow instance again once its estimate has decayed', () => {
    const { balancer, clock, random } = setup([A, B]);
    const behave: Behaviour = (origin) => (origin === B ? healthy(random, 400)() : healthy(random, 5)());
    driveSequential(balancer, clock, behave, { calls: 50, attempts: 1 });
    const before = driveSequential(balancer, clock, behave, { calls: 100, attempts: 1 });
    expect(before.received(B)).toBe(0);
    clock.advance(60_000);
    const after = driveSequential(balancer, clock, behave, { calls: 20, attempts: 1 });
    expect(after.received(B)).toBeGreaterThan(0);
  });
});

describe('Balancer: distance', () => {
  it('says how much farther than the nearest an instance is: the floor of its latencies above the lowest one', () => {
    const { balancer, clock, random } = setup([A, B, C]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    expect(balancer.distanceMs(A)).toBe(0);
    // A answers in 20–40 ms; B in the same plus 150 ms on the wire; C never answers.
    for (let k = 0; k < 40; k++) {
      clock.advance(10);
      balancer.finished(a, 'success', 20 + 20 * random(), clock.now());
      balancer.finished(b, 'success', 170 + 20 * random(), clock.now());
    }
    expect(balancer.distanceMs(A)).toBe(0);
    expect(balancer.distanceMs(B)).toBeGreaterThan(140);
    expect(balancer.distanceMs(B)).toBeLessThan(160);
    expect(balancer.distanceMs(C)).toBe(0);
    expect(balancer.snapshot(clock.now()).instances.map((x) => x.distanceMs)).toEqual([
      0,
      balancer.distanceMs(B),
      0,
    ]);
    expect(balancer.distanceMs('http://127.0.0.1:9999')).toBe(0);
    // A timed-out attempt says only "at least": no floor moves.
    balancer.finished(a, 'timeout', 5_000, clock.now());
    expect(balancer.distanceMs(B)).toBeGreaterThan(140);
    // Once A has left the fleet, B is the nearest.
    balancer.remove(A, clock.now());
    expect(balancer.distanceMs(B)).toBe(0);
  });

  it('follows a path that got longer within its last eight answers, and one that got shorter at once', () => {
    const { balancer, clock } = setup([A, B]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    const answer = (i: number, ms: number) => {
      clock.advance(10);
      balancer.finished(i, 'success', ms, clock.now());
    };
    for (let k = 0; k < 10; k++) {
      answer(a, 20);
      answer(b, 20);
    }
    expect(balancer.distanceMs(B)).toBe(0);
    for (let k = 0; k < 7; k++) answer(b, 170);
    expect(balancer.distanceMs(B)).toBe(0);
    answer(b, 170);
    expect(balancer.distanceMs(B)).toBe(150);
    // A quicker answer is the floor at once; 25 ms against 20 is the floors' own noise, no distance.
    answer(b, 25);
    expect(balancer.distanceMs(B)).toBe(0);
    answer(b, 59);
    expect(balancer.distanceMs(B)).toBe(0);
    // The nearest instance's floor falling moves every distance: B at three times A's is far.
    answer(a, 8);
    expect(balancer.distanceMs(B)).toBe(17);
    expect(balancer.distanceMs(A)).toBe(0);
  });
});

describe('Balancer: outlier ejection', () => {
  it('sends an always-503 instance at most 15 % of 300 sequential calls, and 99 % of them succeed', () => {
    const { balancer, clock, random } = setup([A, B]);
    const ok = healthy(random, 3);
    const behave: Behaviour = (origin) => (origin === B ? { outcome: 'gateway', latencyMs: 1 } : ok());
    const run = driveSequential(balancer, clock, behave, { calls: 300, attempts: 2 });
    expect(run.received(B) / 300).toBeLessThanOrEqual(0.15);
    expect(run.succeeded / 300).toBeGreaterThanOrEqual(0.99);
  });

  it('ejects after the configured number of gateway failures in a row, for base × times ejected, capped', () => {
    const { balancer, clock } = setup([A, B], { baseEjectionMs: 1_000, maxEjectionMs: 2_500 });
    const b = balancer.indexOf(B);
    answerCleanly(balancer, A, clock.now());
    const failOnB = () => {
      for (let k = 0; k < BALANCER_DEFAULTS.consecutiveFailures; k++) {
        const i = balancer.pickRetry([balancer.indexOf(A)], clock.now()); // prefers B over A
        expect(i).toBe(b);
        balancer.finished(i, 'gateway', 1, clock.now());
      }
    };
    const durations: number[] = [];
    failOnB();
    for (let n = 0; n < 3; n++) {
      const s = stateOf(balancer, B, clock.now());
      expect(s.state).toBe('ejected');
      durations.push(s.untilMs! - clock.now());
      clock.advanceTo(s.untilMs!);
      const probe = balancer.pick(clock.now());
      expect(probe).toBe(b);
      expect(stateOf(balancer, B, clock.now()).state).toBe('probing');
      // A answers cleanly while the probe is out: B alone fails.
      answerCleanly(balancer, A, clock.now());
      balancer.finished(probe, 'gateway', 1, clock.now());
    }
    expect(durations).toEqual([1_000, 2_000, 2_500]);
  });

  it('does not count 500s toward the consecutive rule, and 429s toward nothing', () => {
    const { balancer, clock } = setup([A, B]);
    const b = balancer.indexOf(B);
    for (let k = 0; k < 30; k++) {
      balancer.pickRetry([balancer.indexOf(A)], clock.now());
      balancer.finished(b, 'neutral', 1, clock.now());
    }
    expect(stateOf(balancer, B, clock.now()).state).toBe('up');
    for (let k = 0; k < 8; k++) {
      balancer.pickRetry([balancer.indexOf(A)], clock.now());
      balancer.finished(b, 'error', 1, clock.now());
    }
    expect(stateOf(balancer, B, clock.now()).state).toBe('up');
  });

  it('ejects an instance failing 40 % of its calls with 503 through the failure ratio', () => {
    const { balancer, clock, random } = setup([A, B, C]);
    const ok = healthy(random, 5);
    const behave: Behaviour = (origin) =>
      origin === C && random() < 0.4 ? { outcome: 'gateway', latencyMs: 2 } : ok();
    driveSequential(balancer, clock, behave, { calls: 300, attempts: 2 });
    const c = stateOf(balancer, C, clock.now());
    expect(c.timesEjected).toBeGreaterThanOrEqual(1);
  });

  it('ejects no one when every instance fails 40 % of its calls (no outlier, nothing to gain)', () => {
    const { balancer, clock, random } = setup([A, B, C]);
    const ok = healthy(random, 5);
    const behave: Behaviour = () => (random() < 0.4 ? { outcome: 'error', latencyMs: 2 } : ok());
    driveSequential(balancer, clock, behave, { calls: 600, attempts: 1 });
    for (const s of balancer.snapshot(clock.now()).instances) expect(s.timesEjected).toBe(0);
  });

  it('ejects an instance answering 500 to everything while its peers do not', () => {
    const { balancer, clock, random } = setup([A, B]);
    const ok = healthy(random, 5);
    const behave: Behaviour = (origin) => (origin === B ? { outcome: 'error', latencyMs: 2 } : ok());
    driveSequential(balancer, clock, behave, { calls: 300, attempts: 2 });
    expect(stateOf(balancer, B, clock.now()).timesEjected).toBeGreaterThanOrEqual(1);
  });

  it.each([
    [1, 0],
    [2, 1],
    [3, 1],
    [4, 2],
    [10, 5],
  ])('with %i instances, all but one answering 503, ejects at most %i', (n, most) => {
    const origins = [A, B, C, D, ...Array.from({ length: 6 }, (_, k) => `http://10.0.0.${k}:80`)].slice(0, n);
    const { balancer, clock, random } = setup(origins);
    const ok = healthy(random, 5);
    const good = n === 1 ? undefined : origins[n - 1];
    const run = driveSequential(
      balancer,
      clock,
      (origin) => (origin === good ? ok() : { outcome: 'gateway', latencyMs: 1 }),
      {
        calls: 400,
        attempts: 2,
      },
    );
    if (good === undefined) expect(run.succeeded).toBe(0);
    const ejected = balancer
      .snapshot(clock.now())
      .instances.filter((s) => s.state === 'ejected' || s.state === 'probing').length;
    expect(ejected).toBe(most);
  });

  it.each([2, 4, 10])(
    'with %i instances all answering 503, none stays ejected: every instance fails alike',
    (n) => {
      const origins = [A, B, C, D, ...Array.from({ length: 6 }, (_, k) => `http://10.0.0.${k}:80`)].slice(
        0,
        n,
      );
      const { balancer, clock } = setup(origins);
      // 30 s of calls: an instance ejected while a peer had no failure on record yet is probed after
      // its base ejection, and its failed probe brings it back, since no peer answers cleanly.
      const run = driveSequential(balancer, clock, () => ({ outcome: 'gateway', latencyMs: 1 }), {
        calls: 600,
        attempts: 2,
        gapMs: 50,
      });
      expect(run.succeeded).toBe(0);
      for (const s of balancer.snapshot(clock.now()).instances) {
        expect(s.state).toBe('up');
        expect(s.timesEjected).toBeLessThanOrEqual(1);
      }
    },
  );

  it('keeps an instance ejected during a fleet-wide burst no longer than the burst: its failed probe brings it back', () => {
    const { balancer, clock, random } = setup([A, B]);
    const ok = healthy(random, 5);
    let burst = false;
    // A fails alone until it is ejected; then the whole fleet fails (a burst); then all is well.
    const behave: Behaviour = (origin) =>
      burst || origin === A ? { outcome: 'gateway', latencyMs: 1 } : ok();
    driveSequential(balancer, clock, behave, { calls: 50, attempts: 2, gapMs: 5 });
    expect(stateOf(balancer, A, clock.now()).state).toBe('ejected');
    burst = true;
    driveSequential(balancer, clock, behave, { calls: 3_000, attempts: 2, gapMs: 5 });
    expect(stateOf(balancer, A, clock.now()).state).toBe('up');
    expect(stateOf(balancer, A, clock.now()).timesEjected).toBe(1);
  });

  it('returns a healed instance through one probe, then ramps its share up without a burst', () => {
    const { balancer, clock, random } = setup([A, B]);
    const ok = healthy(random, 5);
    let healedAt = Number.POSITIVE_INFINITY;
    const behave: Behaviour = (origin, nowMs) =>
      origin === B && nowMs < healedAt ? { outcome: 'gateway', latencyMs: 1 } : ok();
    // Sick for 40 s (ejected, probes fail, ejected longer), then healed.
    driveSequential(balancer, clock, behave, { calls: 4_000, attempts: 2, gapMs: 5 });
    healedAt = clock.now();
    const sick = stateOf(balancer, B, healedAt);
    expect(sick.state).toBe('ejected');
    expect(sick.timesEjected).toBeGreaterThanOrEqual(2);
    // The documented time to regain a full share: the rest of the ejection, one probe, slow start.
    const fullShareBy = sick.untilMs! + BALANCER_DEFAULTS.slowStartMs;
    const run = driveSequential(balancer, clock, behave, {
      calls: Math.ceil((fullShareBy - healedAt + 5_000) / 10),
      attempts: 2,
      gapMs: 5,
    });
    const returnedAt = run.attempts.find((a) => a.origin === B)!.atMs;
    expect(returnedAt).toBeGreaterThanOrEqual(sick.untilMs!);
    for (let from = returnedAt; from + 1_000 <= fullShareBy + 5_000; from += 1_000) {
      const inSecond = run.attempts.filter((a) => a.atMs >= from && a.atMs < from + 1_000);
      const share = inSecond.filter((a) => a.origin === B).length / inSecond.length;
      const allowed = slowStartShare(from + 1_000 - returnedAt, BALANCER_DEFAULTS.slowStartMs, 0.1);
      expect(share).toBeLessThanOrEqual(allowed + 0.05);
    }
    const last = run.attempts.filter((a) => a.atMs >= fullShareBy && a.atMs < fullShareBy + 5_000);
    expect(last.filter((a) => a.origin === B).length / last.length).toBeGreaterThan(0.3);
  });

  it('lets a single probe through when an ejection ends, and holds the rest until it answers', () => {
    const { balancer, clock } = setup([A, B, C]);
    const b = balancer.indexOf(B);
    answerCleanly(balancer, A, clock.now());
    for (let k = 0; k < 5; k++) {
      balancer.pickRetry([], clock.now());
      balancer.finished(b, 'gateway', 1, clock.now());
    }
    clock.advance(BALANCER_DEFAULTS.baseEjectionMs);
    const picks = Array.from({ length: 100 }, () => balancer.pick(clock.now()));
    expect(picks.filter((i) => i === b)).toHaveLength(1);
    expect(picks[0]).toBe(b);
    balancer.finished(b, 'neutral', 0, clock.now()); // cancelled: another probe may go
    expect(balancer.pick(clock.now())).toBe(b);
    balancer.finished(b, 'success', 5, clock.now());
    expect(stateOf(balancer, B, clock.now())).toMatchObject({ state: 'up', slowStartShare: 0.1 });
  });

  it('enters panic when too few instances are up, spreading load over the ejected ones too', () => {
    const { balancer, clock } = setup([A, B, C, D]);
    const [a, b, c] = [A, B, C].map((o) => balancer.indexOf(o));
    answerCleanly(balancer, D, clock.now());
    for (const i of [a, b]) {
      for (let k = 0; k < 5; k++) {
        balancer.pickRetry([], clock.now());
        balancer.finished(i!, 'gateway', 1, clock.now());
      }
    }
    expect(balancer.snapshot(clock.now()).panic).toBe(false);
    const calm = Array.from({ length: 200 }, () => balancer.pick(clock.now()));
    expect(calm.filter((i) => i === a || i === b)).toHaveLength(0);
    // C refuses connections: 1 of 4 up is below the 50 % panic threshold.
    balancer.pick(clock.now());
    balancer.finished(c!, 'refused', 1, clock.now());
    expect(balancer.snapshot(clock.now()).panic).toBe(true);
    const panicked = Array.from({ length: 300 }, () => balancer.pick(clock.now()));
    expect(panicked.filter((i) => i === a).length).toBeGreaterThan(30);
    expect(panicked.filter((i) => i === b).length).toBeGreaterThan(30);
    expect(panicked.filter((i) => i === c)).toHaveLength(0);
  });
});

describe('Balancer: retries and hedges', () => {
  it('never retries on an instance known to refuse connections while another is up', () => {
    const { balancer, clock, random } = setup([A, B, C]);
    const ok = healthy(random, 5);
    const refusedAt = new Map<string, number>();
    const behave: Behaviour = (origin, nowMs) => {
      if (origin === C) {
        refusedAt.set(C, nowMs);
        return { outcome: 'refused', latencyMs: 0.5 };
      }
      if (origin === B && random() < 0.5) return { outcome: 'gateway', latencyMs: 2 };
      return ok();
    };
    const run = driveSequential(balancer, clock, behave, { calls: 2_000, attempts: 2, gapMs: 10 });
    let lastRefusal = Number.NEGATIVE_INFINITY;
    for (const attempt of run.attempts) {
      if (attempt.kind === 'retry' && attempt.origin === C)
        expect(attempt.atMs - lastRefusal).toBeGreaterThanOrEqual(BALANCER_DEFAULTS.connectDownMs);
      if (attempt.origin === C) lastRefusal = attempt.atMs;
    }
  });

  it('prefers for a retry: another up instance › the one that failed › the least recently failed', () => {
    const { balancer, clock } = setup([A, B, C], { consecutiveFailures: 1 });
    const [a, b, c] = [A, B, C].map((o) => balancer.indexOf(o)) as [number, number, number];
    balancer.finished(a, 'success', 5, clock.now());
    balancer.pick(clock.now());
    balancer.finished(c, 'refused', 1, clock.now()); // C ejected (one failure is enough here)
    clock.advance(10);
    for (let k = 0; k < 50; k++) {
      const i = balancer.pickRetry([a], clock.now());
      expect(i).toBe(b);
      balancer.finished(i, 'success', 5, clock.now());
    }
    // B goes down (max ejection reached: one of three), A failed: A is up, so A.
    balancer.pickRetry([a], clock.now());
    balancer.finished(b, 'refused', 1, clock.now());
    expect(stateOf(balancer, B, clock.now()).state).toBe('down');
    // In panic (one up of three) ejection is ignored: C is as good as A.
    const retries = Array.from({ length: 40 }, () => balancer.pickRetry([a], clock.now()));
    expect(new Set(retries)).toEqual(new Set([c]));
  });

  it('never sends a third try back to an instance that already failed the call while another is up', () => {
    // A call: 503 on A, then its retry refused by C (requeued): the requeue goes to B or D, never A.
    for (let seed = 1; seed <= 200; seed++) {
      const { balancer, clock } = setup([A, B, C, D], {}, seed);
      const [a, b, c, d] = [A, B, C, D].map((o) => balancer.indexOf(o)) as [number, number, number, number];
      const i = balancer.pickRetry([a, c], clock.now());
      expect([b, d]).toContain(i);
      balancer.finished(i, 'success', 1, clock.now());
    }
  });

  it('returns to the earlier failed instance before the last one when every up instance failed the call', () => {
    const { balancer, clock } = setup([A, B]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    for (let k = 0; k < 20; k++) {
      const i = balancer.pickRetry([a, b], clock.now());
      expect(i).toBe(a);
      balancer.finished(i, 'success', 1, clock.now());
    }
  });

  it('falls back to the least recently failed instance when none other is up', () => {
    const { balancer, clock } = setup([A, B]);
    const [a, b] = [balancer.indexOf(A), balancer.indexOf(B)];
    balancer.pick(clock.now());
    balancer.finished(b, 'refused', 1, clock.now());
    clock.advance(5);
    balancer.pick(clock.now());
    balancer.finished(a, 'refused', 1, clock.now());
    expect(balancer.pickRetry([a], clock.now())).toBe(b);
    expect(balancer.pick(clock.now())).toBe(b);
  });

  it('sends a hedge to another instance, the cheaper of two, and nowhere when none is up', () => {
    const { balancer, clock } = setup([A, B, C]);
    const [a, b, c] = [A, B, C].map((o) => balancer.indexOf(o)) as [number, number, number];
    for (const [i, ms] of [
      [a, 10],
      [b, 5],
      [c, 300],
    ] as const) {
      balancer.pickRetry([], clock.now());
      balancer.finished(i, 'success', ms, clock.now());
    }
    const hedges = Array.from({ length: 30 }, () => {
      const h = balancer.pickHedge(a, clock.now());
      balancer.finished(h, 'neutral', 0, clock.now());
      return h;
    });
    expect(new Set(hedges)).toEqual(new Set([b]));
    const single = setup([A]).balancer;
    expect(single.pickHedge(0, 0)).toBe(-1);
  });

  it('picks an origin again for a retry that must go back to it, even ejected, until it has left', () => {
    const { balancer, clock } = setup([A, B]);
    const now = clock.now();
    const b = balancer.indexOf(B);
    // Ejected: B still holds the first execution of the write, so the retry goes there.
    for (let k = 0; k < BALANCER_DEFAULTS.consecutiveFailures; k++) {
      answerCleanly(balancer, A, now);
      balancer.finished(b, 'gateway', 5, now);
    }
    expect(stateOf(balancer, B, now).state).toBe('ejected');
    expect(balancer.pickAgain(B, now)).toBe(b);
    balancer.finished(b, 'neutral', 0, now);
    expect(balancer.pickAgain('http://127.0.0.1:9999', now)).toBe(-1);
    // While B drains (the retry is one of its calls in flight) it is still there; once gone, not.
    expect(balancer.pickAgain(B, now)).toBe(b);
    balancer.remove(B, now);
    expect(balancer.pickAgain(B, now)).toBe(b);
    for (let k = 0; k < 2; k++) balancer.finished(b, 'success', 5, now);
    expect(balancer.pickAgain(B, now)).toBe(-1);
  });
});

describe('Balancer: transitions', () => {
  it('reports ejection, probe, return and membership changes, in order', () => {
    const seen: string[] = [];
    const { balancer, clock } = setup([A, B], {
      onTransition: (t) =>
        seen.push(`${'ABCD'[[A, B, C, D].indexOf(t.origin)]} ${t.from}→${t.to} ${t.reason}`),
    });
    const b = balancer.indexOf(B);
    answerCleanly(balancer, A, clock.now());
    for (let k = 0; k < 5; k++) {
      balancer.pickRetry([balancer.indexOf(A)], clock.now());
      balancer.finished(b, 'gateway', 1, clock.now());
    }
    clock.advance(BALANCER_DEFAULTS.baseEjectionMs);
    const probe = balancer.pick(clock.now());
    answerCleanly(balancer, A, clock.now());
    balancer.finished(probe, 'gateway', 1, clock.now());
    clock.advance(2 * BALANCER_DEFAULTS.baseEjectionMs);
    balancer.finished(balancer.pick(clock.now()), 'success', 5, clock.now());
    balancer.pickRetry([b], clock.now());
    balancer.finished(balancer.indexOf(A), 'refused', 1, clock.now());
    clock.advance(BALANCER_DEFAULTS.connectDownMs);
    balancer.snapshot(clock.now());
    const c = balancer.add(C, clock.now());
    // Until C holds a call (it is in slow start: a few picks).
    for (let k = 0; k < 1_000 && stateOf(balancer, C, clock.now()).inFlight === 0; k++) {
      const i = balancer.pick(clock.now());
      if (i !== c) balancer.finished(i, 'success', 5, clock.now());
    }
    balancer.remove(C, clock.now());
    balancer.finished(c, 'success', 5, clock.now());
    balancer.add(D, clock.now());
    balancer.remove(D, clock.now());
    expect(seen).toEqual([
      'B up→ejected consecutive-failures',
      'B ejected→probing ejection-ended',
      'B probing→ejected probe-failed',
      'B ejected→probing ejection-ended',
      'B probing→up probe-succeeded',
      'A up→down connect-failure',
      'A down→up down-ended',
      'C absent→up added',
      'C up→draining removed',
      'C draining→absent drained',
      'D absent→up added',
      'D up→absent removed',
    ]);
  });

  it('returns an instance whose probe fails as often as its peers fail (a fleet-wide error burst), and re-ejects it when they answer cleanly', () => {
    // B fails alone (its connections reset): ejected.
    const { seen, balancer, clock, a, b, c } = withBEjected();
    // Then the whole fleet answers 503 to 40 % of its calls; A and C each have a clean run of five.
    for (let k = 0; k < 20; k++) {
      balancer.finished(a, k % 5 < 2 ? 'gateway' : 'success', 5, clock.now());
      balancer.finished(c, k % 5 < 2 ? 'gateway' : 'success', 5, clock.now());
    }
    clock.advance(BALANCER_DEFAULTS.baseEjectionMs);
    // B's probe gets a 503, as 40 % of everyone's calls do (A answers cleanly meanwhile): it comes
    // back (in slow start).
    const probe = balancer.pick(clock.now());
    expect(probe).toBe(b);
    answerCleanly(balancer, A, clock.now());
    balancer.finished(b, 'gateway', 1, clock.now());
    expect(stateOf(balancer, B, clock.now()).state).toBe('up');
    // Later B alone fails again while its peers answer cleanly: ejected, and its failed probe keeps it out.
    for (let k = 0; k < 20; k++) {
      balancer.finished(a, 'success', 5, clock.now());
      balancer.finished(c, 'success', 5, clock.now());
    }
    for (let k = 0; k < BALANCER_DEFAULTS.consecutiveFailures; k++)
      balancer.finished(b, 'gateway', 1, clock.now());
    clock.advance(2 * BALANCER_DEFAULTS.baseEjectionMs);
    expect(balancer.pick(clock.now())).toBe(b);
    answerCleanly(balancer, A, clock.now());
    balancer.finished(b, 'gateway', 1, clock.now());
    expect(seen.filter((line) => line.startsWith('B'))).toEqual([
      'B up→ejected consecutive-failures',
      'B ejected→probing ejection-ended',
      'B probing→up fleet-failing',
      'B up→ejected consecutive-failures',
      'B ejected→probing ejection-ended',
      'B probing→ejected probe-failed',
    ]);
  });

  it('returns an instance whose probe fails when no other instance has answered since the probe was sent (an outage in which every call ran out of time)', () => {
    // B fails alone while A answers cleanly: ejected.
    const { seen, balancer, clock, a, b, c } = withBEjected();
    // Then the whole fleet stops answering: every call runs out of time at its deadline (neutral:
    // it changes no one's clean run) for 20 s.
    for (let s = 0; s < 20; s++) {
      clock.advance(1_000);
      balancer.finished(a, 'neutral', 1_000, clock.now());
      balancer.finished(c, 'neutral', 1_000, clock.now());
    }
    // B's probe, sent 300 ms before the fleet restarts, is reset with it; A and C have not answered
    // since: their clean runs are 20 s old and say nothing of the fleet now. B comes back.
    const probe = balancer.pick(clock.now());
    expect(probe).toBe(b);
    clock.advance(300);
    balancer.finished(probe, 'gateway', 300, clock.now());
    expect(stateOf(balancer, B, clock.now()).state).toBe('up');
    expect(seen.filter((line) => line.startsWith('B'))).toEqual([
      'B up→ejected consecutive-failures',
      'B ejected→probing ejection-ended',
      'B probing→up fleet-failing',
    ]);
  });

  describe('a probe judged on the fleet of the moment, while members come and go', () => {
    /** B ejected, then 20 s in which no call of A or C is answered (neutral), then B's probe out. */
    function probeAfterOutage() {
      const run = withBEjected();
      for (let s = 0; s < 20; s++) {
        run.clock.advance(1_000);
        run.balancer.finished(run.a, 'neutral', 1_000, run.clock.now());
        run.balancer.finished(run.c, 'neutral', 1_000, run.clock.now());
      }
      expect(run.balancer.pick(run.clock.now())).toBe(run.b);
      return run;
    }

    it('a member that joined during the probe, not yet answered, is no clean answer: the instance comes back', () => {
      const { seen, balancer, clock, b } = probeAfterOutage();
      balancer.add(D, clock.now());
      clock.advance(300);
      balancer.finished(b, 'gateway', 300, clock.now());
      expect(stateOf(balancer, B, clock.now()).state).toBe('up');
      expect(seen.at(-1)).toBe('B probing→up fleet-failing');
    });

    it('a member that left during the probe no longer counts, even with a clean run from before', () => {
      const { seen, balancer, clock, b } = probeAfterOutage();
      // A answered cleanly after the probe went out, then left the fleet (nothing in flight: released).
      answerCleanly(balancer, A, clock.now());
      expect(balancer.remove(A, clock.now())).toBe('removed');
      clock.advance(300);
      balancer.finished(b, 'gateway', 300, clock.now());
      expect(stateOf(balancer, B, clock.now()).state).toBe('up');
      expect(seen.at(-1)).toBe('B probing→up fleet-failing');
    });

    it('a member that joined and answered cleanly since the probe went out keeps the instance out', () => {
      const { seen, balancer, clock, b } = probeAfterOutage();
      balancer.add(D, clock.now());
      clock.advance(100);
      answerCleanly(balancer, D, clock.now());
      clock.advance(200);
      balancer.finished(b, 'gateway', 300, clock.now());
      expect(stateOf(balancer, B, clock.now()).state).toBe('ejected');
      expect(seen.at(-1)).toBe('B probing→ejected probe-failed');
    });

    it("an instance removed while its probe is out drains: the probe's answer releases it, with no ejection", () => {
      const { seen, balancer, clock, b } = probeAfterOutage();
      expect(balancer.remove(B, clock.now())).toBe('draining');
      clock.advance(300);
      expect(balancer.finished(b, 'gateway', 300, clock.now())).toBe(true);
      expect(balancer.indexOf(B)).toBe(-1);
      expect(seen.filter((line) => line.startsWith('B')).at(-1)).not.toMatch(/→ejected/);
    });
  });

  it('keeps its state when a transition listener throws, and rethrows the error in a microtask', async () => {
    const { balancer, clock } = setup([A, B], {
      onTransition: () => {
        throw new Error('listener failed');
      },
    });
    const thrown = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    balancer.pick(clock.now());
    balancer.finished(balancer.indexOf(A), 'refused', 1, clock.now());
    expect(stateOf(balancer, A, clock.now()).state).toBe('down');
    expect(balancer.pick(clock.now())).toBe(balancer.indexOf(B));
    expect(((await thrown) as Error).message).toBe('listener failed');
  });
});

describe('Balancer: membership', () => {
  it('drains a removed instance: no new picks, its calls finish, then its slot is released', () => {
    const { balancer, clock } = setup([A, B]);
    const b = balancer.indexOf(B);
    const inFlight: number[] = [];
    while (inFlight.filter((i) => i === b).length < 2) inFlight.push(balancer.pick(clock.now()));
    expect(balancer.remove(B, clock.now())).toBe('draining');
    expect(stateOf(balancer, B, clock.now()).state).toBe('draining');
    for (let k = 0; k < 100; k++) expect(balancer.pick(clock.now())).not.toBe(b);
    const drained = inFlight
      .filter((i) => i === b)
      .map((i) => balancer.finished(i, 'success', 3, clock.now()));
    expect(drained).toEqual([false, true]);
    expect(balancer.indexOf(B)).toBe(-1);
    expect(balancer.remove(B, clock.now())).toBe('unknown');
  });

  it('adds an instance in slow start without touching the state of the others', () => {
    const { balancer, clock } = setup([A, B]);
    const b = balancer.indexOf(B);
    for (let k = 0; k < 5; k++) {
      balancer.pickRetry([], clock.now());
      balancer.finished(b, 'gateway', 1, clock.now());
    }
    const before = balancer.snapshot(clock.now()).instances;
    const c = balancer.add(C, clock.now());
    const after = balancer.snapshot(clock.now()).instances;
    expect(after.filter((s) => s.origin !== C)).toEqual(before);
    expect(after.find((s) => s.index === c)).toMatchObject({ state: 'up', slowStartShare: 0.1 });
    expect(balancer.add(C, clock.now())).toBe(c);
  });

  it('takes a fleet from a resolver: adds the new, drains the missing, keeps the rest', () => {
    const { balancer, clock } = setup([A, B]);
    const a = balancer.indexOf(A);
    balancer.pickRetry([balancer.indexOf(B)], clock.now());
    balancer.finished(a, 'success', 42, clock.now());
    expect(balancer.setOrigins([A, C, D], clock.now())).toEqual({ added: [C, D], removed: [B] });
    expect(balancer.size).toBe(3);
    expect(stateOf(balancer, A, clock.now()).ewmaMs).toBe(42);
    expect(balancer.setOrigins([], clock.now()).removed).toHaveLength(3);
    expect(balancer.pick(clock.now())).toBe(-1);
  });

  it('counts share of recent calls per instance in the snapshot', () => {
    const { balancer, clock, random } = setup([A, B]);
    driveSequential(balancer, clock, healthy(random), { calls: 200, attempts: 1 });
    const shares = balancer.snapshot(clock.now()).instances.map((s) => s.share);
    expect(shares.reduce((x, y) => x + y)).toBeCloseTo(1, 9);
    clock.advance(3 * BALANCER_DEFAULTS.shareWindowMs);
    expect(balancer.snapshot(clock.now()).instances.map((s) => s.share)).toEqual([0, 0]);
  });

  it('starts the first set given to an empty fleet without slow start, as the constructor does', () => {
    const { balancer, clock } = setup([]);
    balancer.setOrigins([A, B], clock.now());
    expect(balancer.snapshot(clock.now()).instances.map((s) => s.slowStartShare)).toEqual([1, 1]);
    balancer.setOrigins([A, B, C], clock.now());
    const shares = balancer.snapshot(clock.now()).instances.map((s) => s.slowStartShare);
    expect(shares[2]).toBeLessThan(1);
  });

  it('rejects origins that are not non-empty strings with INVALID_OPTION', () => {
    expect(() => createBalancer([A, ''])).toThrow(/origins\[1\]/);
    const { balancer } = setup([A]);
    try {
      balancer.add(42 as unknown as string, 0);
      expect.unreachable();
    } catch (error) {
      expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
    }
  });
});
