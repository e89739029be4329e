import { createRandom, lognormalMs } from '@prazo/lab/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createGradientLimit,
  EARLY_PROBE_DIVISOR,
  GRADIENT_LIMIT_DEFAULTS,
  type GradientLimit,
  type GradientLimitOptions,
  PROBE_SHARE,
  PROBE_WINDOWS,
  type ProbeCounts,
} from './gradient-limit.js';

/**
 * A supplier of `workers` workers, each busy `serviceMs` per call, with a FIFO queue in front, and
 * `callers` callers that send again as soon as they get an answer, gated by the limit. Simulated in
 * 1 ms steps; `serviceMs` may change over time. Returns the limit at every ms.
 */
function simulate(opts: {
  workers: number | ((t: number) => number);
  serviceMs: (t: number) => number;
  callers: (t: number) => number;
  durationMs: number;
  limit?: GradientLimitOptions;
  random?: () => number;
  /** Called with the limit once the run is over. */
  atEnd?: (gl: GradientLimit) => void;
}): number[] {
  const gl = createGradientLimit({ probeIntervalMs: 10_000, ...opts.limit }, opts.random ?? createRandom(1));
  const queue: number[] = []; // start times of calls queued at the supplier
  const busy: Array<{ start: number; until: number }> = [];
  let inFlight = 0;
  const limits: number[] = [];
  for (let t = 0; t < opts.durationMs; t++) {
    // Completions.
    for (let i = busy.length - 1; i >= 0; i--) {
      const job = busy[i]!;
      if (job.until <= t) {
        busy.splice(i, 1);
        gl.sample(t - job.start, job.start, t, inFlight);
        inFlight--;
      }
    }
    // Admissions, as far as the limit and the callers allow.
    while (inFlight < gl.limit() && inFlight < opts.callers(t)) {
      inFlight++;
      queue.push(t);
    }
    const workers = typeof opts.workers === 'number' ? opts.workers : opts.workers(t);
    while (busy.length < workers && queue.length > 0)
      busy.push({ start: queue.shift()!, until: t + opts.serviceMs(t) });
    limits.push(gl.limit());
  }
  opts.atEnd?.(gl);
  return limits;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('createGradientLimit', () => {
  it('settles within 25 % of the Little’s-law concurrency of a supplier under 3× overload', () => {
    for (const workers of [8, 10, 16, 32, 64]) {
      const limits = simulate({
        workers,
        serviceMs: () => 20,
        callers: () => workers * 3,
        durationMs: 20_000,
      });
      const settled = median(limits.slice(10_000));
      expect(
        Math.abs(settled - workers) / workers,
        `workers ${workers}: limit ${settled}`,
      ).toBeLessThanOrEqual(0.25);
    }
  });

  it('does not take a dependency whose latency varies for a queue (log-normal, p99 = 4.5 × median)', () => {
    const random = createRandom(3);
    const gl = createGradientLimit({ initialLimit: 20 }, createRandom(4));
    // A dependency with no queue: every round trip drawn from the same log-normal, 4 in flight.
    let t = 0;
    for (let i = 0; i < 5_000; i++) {
      t += 10;
      gl.sample(lognormalMs(random, 58, 263), t - 60, t, 4);
    }
    expect(gl.limit()).toBeGreaterThanOrEqual(20);
  });

  it('shrinks when the supplier slows down and grows back after the overload', () => {
    const slow = (t: number): number => (t >= 10_000 && t < 20_000 ? 60 : 20);
    const limits = simulate({ workers: 16, serviceMs: slow, callers: () => 48, durationMs: 40_000 });
    const before = median(limits.slice(6_000, 10_000));
    const during = median(limits.slice(16_000, 20_000));
    const after = median(limits.slice(34_000, 40_000));
    expect(Math.abs(before - 16)).toBeLessThanOrEqual(4);
    // Three times slower for the same workers: the probe re-learns the no-load latency, the
    // limit stays near the same Little's-law concurrency (W) rather than collapsing to the floor.
    expect(during).toBeGreaterThanOrEqual(GRADIENT_LIMIT_DEFAULTS.minLimit);
    expect(Math.abs(after - 16)).toBeLessThanOrEqual(4);
  });

  it('re-learns a no-load latency that was measured in a queue as soon as the dependency answers faster, before the limit grows past its capacity', () => {
    // The first probe meets a dependency three times slower than it will be (a cold start, a
    // deploy in progress) and learns 60 ms; from 5 s on the same 16 workers serve in 20 ms. Judged
    // against 60 ms, 48 callers would queue 32 calls at the dependency and read no queue at all: the
    // limit grew past the 48 in flight and stayed there until a periodic probe (10 s here, 60 s by
    // default). Windows well below the no-load latency (FASTER_WINDOWS) re-measure it within a
    // second, at half the limit, as a periodic probe does.
    const serviceMs = (t: number): number => (t < 5_000 ? 60 : 20);
    let probes: ProbeCounts | undefined;
    const limits = simulate({
      workers: 16,
      serviceMs,
      callers: () => 48,
      durationMs: 45_000,
      atEnd: (gl) => {
        probes = gl.state().probes;
      },
    });
    expect(Math.max(...limits.slice(5_000, 10_000))).toBeLessThanOrEqual(24);
    // One probe for the faster windows, the others periodic (the first, then 10 s ± 15 % after the last).
    expect(probes).toEqual({ periodic: 4, floor: 0, futile: 0, faster: 1 });
    expect(Math.abs(median(limits.slice(6_500)) - 16) / 16).toBeLessThanOrEqual(0.25);
  });

  it('probes a bursty caller at half its bursts, not at half of a quiet window before the probe', () => {
    const gl = createGradientLimit(
      { initialLimit: 40, windowSamples: 5, windowMs: 10, probeIntervalMs: 2_000, probeJitter: 0 },
      () => 0.5,
    );
    let t = 0;
    const probeLimits: number[] = [];
    let probing = gl.state().probing;
    while (t < 9_000) {
      // A burst of 40 calls in flight every 500 ms, then single calls.
      const inFlight = t % 500 < 20 ? 40 : 1;
      t += 1;
      gl.sample(10, t - 10, t, inFlight);
      const state = gl.state();
      if (state.probing && !probing && t > 1_000) probeLimits.push(gl.limit());
      probing = state.probing;
    }
    expect(probeLimits.length).toBeGreaterThanOrEqual(3);
    for (const limit of probeLimits) expect(limit).toBeGreaterThanOrEqual(20);
  });

  it('recovers after an overload that pushed it to the floor', () => {
    // 40 callers for 10 s; then the callers drop to 8, then back up to 40.
    const callers = (t: number): number => (t < 10_000 ? 40 : t < 20_000 ? 8 : 40);
    const limits = simulate({ workers: 20, serviceMs: () => 25, callers, durationMs: 35_000 });
    expect(Math.abs(median(limits.slice(5_000, 10_000)) - 20)).toBeLessThanOrEqual(5);
    expect(Math.abs(median(limits.slice(28_000)) - 20)).toBeLessThanOrEqual(5);
  });

  it('re-measures early when held at the floor, used, by a latency that is not a queue (an instance farther away)', () => {
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(5));
    const limits: number[] = [];
    // For 2 s the dependency answers in 50 ms; then in 150 ms for good, with no queue behind it:
    // every round trip is 100 ms longer on the wire.
    const probes = stepLatency(gl, 2_000, 30_000, (t) => {
      if (t % 1_000 === 0) limits.push(gl.limit());
    });
    // It falls to the floor (three times slower than the no-load latency it measured)…
    expect(Math.min(...limits.slice(2, 6))).toBe(GRADIENT_LIMIT_DEFAULTS.minLimit);
    // …and re-measures within a few windows of the early-probe spacing (6 s after the first probe),
    // then grows again: the floor does not keep callers waiting for the 60 s probe interval.
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes[0]!).toBeLessThan(10_000);
    expect(limits[limits.length - 1]!).toBeGreaterThan(2 * GRADIENT_LIMIT_DEFAULTS.minLimit);
    // Early probes are spaced by probeIntervalMs / EARLY_PROBE_DIVISOR at least.
    for (let i = 1; i < probes.length; i++)
      expect(probes[i]! - probes[i - 1]!).toBeGreaterThanOrEqual(60_000 / EARLY_PROBE_DIVISOR);
    // The limit's state says what started them.
    expect(gl.state().probes).toEqual({ periodic: 1, floor: probes.length, futile: 0, faster: 0 });
  });

  it('re-measures early when halving the limit did not move the latency (a latency this caller does not make)', () => {
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(9));
    let lowest = Number.POSITIVE_INFINITY;
    // From 8 s every round trip takes 100 ms longer, whatever the limit (an instance farther away,
    // or peers' load at a busy dependency).
    const probes = stepLatency(gl, 8_000, 20_000, (t, probing, probesSoFar) => {
      if (!probing && t > 8_000 && probesSoFar === 0) lowest = Math.min(lowest, gl.limit());
    });
    // It re-measures once the limit has halved, well before it reaches the floor…
    expect(probes[0]).toBeGreaterThan(8_000);
    expect(probes[0]).toBeLessThan(9_500);
    expect(lowest).toBeGreaterThan(GRADIENT_LIMIT_DEFAULTS.minLimit);
    // …and the no-load latency is the new one: the limit grows again.
    expect(gl.state().noLoadMs).toBeGreaterThan(140);
    expect(gl.limit()).toBeGreaterThan(lowest);
    expect(gl.state().probes).toMatchObject({ periodic: 1, floor: 0, futile: probes.length });
  });

  it('measures an early probe at the limit in force, then at half of it, never at the floor (few callers held back for it)', () => {
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(9));
    let atStart = 0;
    let lowestWhileProbing = Number.POSITIVE_INFINITY;
    const probes = stepLatency(gl, 8_000, 20_000, (_t, probing, probesSoFar) => {
      if (probing && probesSoFar === 1) {
        if (atStart === 0) atStart = gl.limit();
        lowestWhileProbing = Math.min(lowestWhileProbing, gl.limit());
      }
    });
    expect(probes.length).toBeGreaterThanOrEqual(1);
    // The decline had halved the limit; the probe keeps it there, then halves it for as many windows.
    expect(atStart).toBeGreaterThan(2 * GRADIENT_LIMIT_DEFAULTS.minLimit);
    expect(lowestWhileProbing).toBe(Math.floor(atStart / 2));
  });

  it('learns no queue in an early probe during a capacity drop: its windows at half the limit have none', () => {
    // 16 workers of 40 ms (± 30 %), 1–5 ms more outside a worker (the network), 48 callers waiting
    // for a slot; for 20 s from 3.5 s only 4 workers. The limit falls to about 6, and the
    // futile-decline rule probes early. At the limit in force that probe met a queue (6 calls on 4
    // workers: ≈ 60 ms) and learnt it as the no-load latency; once the 16 workers were back, judged
    // against it their queue read as none, and the limit settled at 26–29 (Little's law ≈ 18) in
    // three of these six runs, until the next periodic probe. The probe's windows at half the limit
    // (3 calls on 4 workers) have no queue, and the lowest window is the no-load latency.
    const random = createRandom(1);
    for (let run = 0; run < 6; run++) {
      const gl = createGradientLimit({ minLimit: 2, initialLimit: 20, windowMs: 100 }, random);
      const queue: number[] = [];
      const busy: Array<{ start: number; until: number }> = [];
      const outside: Array<{ start: number; at: number }> = [];
      let inFlight = 0;
      const limits: number[] = [];
      for (let t = 0; t < 31_500; t++) {
        const workers = t >= 3_500 && t < 23_500 ? 4 : 16;
        for (let i = outside.length - 1; i >= 0; i--)
          if (outside[i]!.at <= t) {
            const [call] = outside.splice(i, 1);
            gl.sample(t - call!.start, call!.start, t, inFlight, 48 - inFlight);
            inFlight--;
          }
        for (let i = busy.length - 1; i >= 0; i--)
          if (busy[i]!.until <= t) {
            const [call] = busy.splice(i, 1);
            outside.push({ start: call!.start, at: t + 3.5 * (0.5 + random()) });
          }
        while (inFlight < gl.limit() && inFlight < 48) {
          inFlight++;
          queue.push(t);
        }
        while (busy.length < workers && queue.length > 0)
          busy.push({ start: queue.shift()!, until: t + 40 * (0.7 + 0.6 * random()) });
        limits.push(gl.limit());
      }
      const { noLoadMs, probes } = gl.state();
      const summary = `run ${run}: no-load ${noLoadMs} ms, probes ${JSON.stringify(probes)}`;
      expect(noLoadMs!, summary).toBeLessThan(40 * 1.3);
      // Little's law at the no-load latency: 16 workers × its round trip ÷ 40 ms.
      const littles = (16 * noLoadMs!) / 40;
      expect(Math.abs(median(limits.slice(27_500)) - littles) / littles, summary).toBeLessThanOrEqual(0.25);
    }
  });

  it('keeps cutting, with no early probe, while the latency falls as the limit does (its own queue)', () => {
    // Every caller waits for a slot; the dependency's 4 workers serve 20 ms each, so the latency is
    // the queue the limit lets in: an overload this client makes, which a lower limit relieves.
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(10));
    let probes = 0;
    let wasProbing = true;
    for (let t = 5; t <= 20_000; t += 5) {
      const inFlight = gl.limit();
      const rtt = 20 * Math.max(1, inFlight / 4);
      gl.sample(rtt, t - rtt, t, inFlight);
      const probing = gl.state().probing;
      if (probing && !wasProbing && t > 8_000) probes++;
      wasProbing = probing;
    }
    expect(probes).toBe(0);
    expect(gl.limit()).toBeLessThanOrEqual(8);
    expect(gl.state().probes).toEqual({ periodic: 1, floor: 0, futile: 0, faster: 0 });
  });

  it('does not re-measure early while the dependency sheds load (calls refused with 429/503)', () => {
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(8));
    let probes = 0;
    let wasProbing = true;
    for (let t = 5; t <= 30_000; t += 5) {
      const rtt = t < 2_000 ? 50 : 150;
      gl.sample(rtt, t - rtt, t, gl.limit());
      // Past its capacity, the dependency refuses a call now and then.
      if (t >= 2_000 && t % 200 === 0) gl.refused(t);
      const probing = gl.state().probing;
      if (probing && !wasProbing) probes++;
      wasProbing = probing;
    }
    expect(probes).toBe(0);
    expect(gl.limit()).toBe(GRADIENT_LIMIT_DEFAULTS.minLimit);
  });

  it('does not re-measure early for a caller that does not use the floor', () => {
    const gl = createGradientLimit({ probeIntervalMs: 60_000, probeJitter: 0 }, createRandom(6));
    let probes = 0;
    let wasProbing = true;
    for (let t = 5; t <= 30_000; t += 5) {
      const rtt = t < 2_000 ? 50 : 150;
      gl.sample(rtt, t - rtt, t, t < 2_000 ? gl.limit() : 1);
      const probing = gl.state().probing;
      if (probing && !wasProbing) probes++;
      wasProbing = probing;
    }
    expect(probes).toBe(0);
  });

  it('keeps the floor when every call is slow', () => {
    const gl = createGradientLimit({ minLimit: 3, initialLimit: 10, windowSamples: 1, windowMs: 1 });
    gl.sample(10, 0, 1, 1);
    for (let t = 2; t < 500; t++) gl.sample(10_000, t - 1, t, 10);
    expect(gl.state()).toMatchObject({ limit: 3, probing: false });
  });

  it('does not grow while less than half of the limit is in use (a quiet caller proves nothing)', () => {
    const gl = createGradientLimit({ initialLimit: 20, windowSamples: 1, windowMs: 1 });
    for (let t = 1; t < 1000; t++) gl.sample(5, t - 1, t, 3);
    expect(gl.limit()).toBe(20);
  });

  it('grows by its headroom while latency stays at the no-load level and the limit is used', () => {
    const gl = createGradientLimit({ initialLimit: 10, windowSamples: 1, windowMs: 1 });
    for (let t = 1; t < 100; t++) gl.sample(5, t - 1, t, gl.limit());
    expect(gl.limit()).toBeGreaterThan(30);
  });

  it('starts slow: doubles per round trip of every slot while callers wait, until a window reads queueing', () => {
    const gl = createGradientLimit({ initialLimit: 20, windowSamples: 10, windowMs: 100 });
    let t = 0;
    /** `n` round trips of `rttMs`, one every `stepMs`, with `inFlight` in flight and `waiting` waiting. */
    const feed = (n: number, rttMs: number, stepMs: number, inFlight: number, waiting?: number) => {
      for (let i = 0; i < n; i++) {
        const started = t;
        t += stepMs;
        gl.sample(rttMs, started, t, inFlight, waiting);
      }
    };
    // The first probe (three windows at the floor); meanwhile the wait is judged at the limit after it.
    expect(gl.steadyLimit()).toBe(20);
    feed(30, 10, 1, 4, 50);
    expect(gl.state()).toMatchObject({ limit: 20, probing: false, slowStart: true });
    expect(gl.steadyLimit()).toBe(20);
    // Every slot in use and 50 callers waiting, at the no-load latency: a window closes after a
    // round trip of every slot (20 samples, well under windowMs), and the limit doubles.
    feed(20, 10, 0.5, 20, 50);
    expect(gl.limit()).toBe(40);
    feed(40, 10, 0.25, 40, 50);
    expect(gl.limit()).toBe(80);
    // A window that reads queueing ends the slow start for good: the limit shrinks, and full use
    // with callers waiting no longer doubles it.
    feed(101, 40, 1, 80, 50);
    expect(gl.state().slowStart).toBe(false);
    const shrunk = gl.limit();
    expect(shrunk).toBeLessThan(80);
    feed(303, 10, 1, shrunk, 50);
    expect(gl.limit()).toBeLessThan(shrunk * 1.5);
  });

  it('never doubles for a caller that does not say who waits (no `waiting`)', () => {
    const gl = createGradientLimit({ initialLimit: 20, windowSamples: 10, windowMs: 100 });
    for (let t = 1; t <= 30; t++) gl.sample(10, t - 1, t, 4);
    for (let t = 31; t <= 333; t++) gl.sample(10, t - 1, t, gl.limit());
    // Three windows of √limit growth, smoothed: ≈ 20 → 21 → 22 → 23.
    expect(gl.limit()).toBeLessThan(25);
    expect(gl.state().slowStart).toBe(true);
  });

  it('starts with a no-load probe at the floor, then uses the initial limit', () => {
    const gl = createGradientLimit({ initialLimit: 10, minLimit: 3, windowSamples: 2, windowMs: 10 });
    expect(gl.state()).toMatchObject({ limit: 3, probing: true, noLoadMs: undefined });
    // Three windows; the first pays for a cold start, the lowest mean wins.
    const means = [60, 25, 30];
    means.forEach((mean, w) => {
      gl.sample(mean - 5, w * 20, w * 20, 1);
      gl.sample(mean + 5, w * 20 + 5, w * 20 + 10, 1);
      expect(gl.state().probing).toBe(w < PROBE_WINDOWS - 1);
    });
    // The lowest mean, plus two standard errors of its two round trips (20 and 30: 5 ms).
    expect(gl.state()).toMatchObject({ limit: 10, probing: false, noLoadMs: 35, rttMs: 30 });
  });

  it('re-measures the no-load latency at half the limit after the probe interval, ignoring calls started before', () => {
    const gl = createGradientLimit(
      { initialLimit: 10, windowSamples: 2, windowMs: 10, probeIntervalMs: 1000, probeJitter: 0 },
      () => 0.5,
    );
    let t = 0;
    // A caller that uses its whole limit.
    for (; t < 1000; t += 5) gl.sample(20, t - 20, t, gl.limit());
    expect(gl.state()).toMatchObject({ noLoadMs: 20, probing: false });
    while (!gl.state().probing && t < 2000) {
      t += 5;
      gl.sample(20, t - 20, t, gl.limit());
    }
    expect(gl.state().probing).toBe(true);
    // Half the limit, not the floor: the dependency has idle workers there, and the callers beyond
    // the floor are not held back for the probe's windows.
    // Half of the limit (of the calls in flight, which the limit grew to meet during the window).
    expect(Math.abs(gl.limit() - gl.state().estimate * PROBE_SHARE)).toBeLessThanOrEqual(2);
    expect(gl.limit()).toBeGreaterThan(GRADIENT_LIMIT_DEFAULTS.minLimit);
    const probeStart = t;
    gl.sample(500, probeStart - 1, t + 1, 5); // started before the probe: ignored
    for (let w = 0; w < PROBE_WINDOWS; w++) {
      t += 20;
      gl.sample(40, t - 10, t, 2);
      t += 20;
      gl.sample(40, t - 10, t, 2);
    }
    const state = gl.state();
    expect(state.probing).toBe(false);
    expect(state.noLoadMs).toBe(40);
    expect(state.limit).toBe(Math.floor(state.estimate));
  });

  it('cuts the limit at once on a drop, to half the calls in flight, and once per flight', () => {
    const gl = createGradientLimit({ initialLimit: 20, minLimit: 2, windowSamples: 1, windowMs: 100 });
    for (let t = 1; t <= PROBE_WINDOWS; t++) gl.sample(10, t - 1, t, 1);
    expect(gl.limit()).toBe(20);
    // 12 calls in flight when the first runs out of time: the limit becomes 6, without a window.
    gl.drop(140, 10, 150, 12);
    expect(gl.state()).toMatchObject({ limit: 6, drops: 1 });
    // The rest of that flight (sent before the cut) times out too: the cut already answered it.
    for (let t = 151; t < 160; t++) gl.drop(140, 12, t, 11);
    expect(gl.state()).toMatchObject({ limit: 6, drops: 1 });
    // A call sent after the cut that also runs out of time is a new drop.
    gl.drop(140, 155, 300, 6);
    expect(gl.state()).toMatchObject({ limit: 3, drops: 2 });
    // Never below the floor.
    gl.drop(140, 301, 450, 3);
    expect(gl.limit()).toBe(2);
  });

  it('leaves a few timeouts among answers to the gradient (the tail at capacity), and drops once they are half', () => {
    const gl = createGradientLimit({ initialLimit: 20, windowSamples: 1, windowMs: 1_000 });
    for (let t = 1; t <= PROBE_WINDOWS; t++) gl.sample(10, t - 1, t, 1);
    for (let i = 0; i < 6; i++) gl.sample(10, 10 + i, 20 + i, 10);
    for (let i = 0; i < 5; i++) gl.drop(140, 15 + i, 160 + i, 10);
    expect(gl.state()).toMatchObject({ limit: 20, drops: 0 });
    gl.drop(140, 21, 170, 10);
    expect(gl.state()).toMatchObject({ limit: 5, drops: 1 });
  });

  it('takes no drop from a rare timeout that happens to open a window (a 2.5 % tail)', () => {
    const gl = createGradientLimit({ initialLimit: 20, probeIntervalMs: 600_000 }, createRandom(7));
    for (let t = 10; t <= 60_000; t += 10) {
      // One round trip in forty runs out of time; the others answer at the no-load latency.
      if (t % 400 === 10) gl.drop(300, t - 300, t, gl.limit());
      else gl.sample(40, t - 40, t, gl.limit());
    }
    expect(gl.state().drops).toBe(0);
    expect(gl.limit()).toBeGreaterThanOrEqual(20);
  });

  it('cuts from the limit when fewer calls than the limit are in flight, and feeds the timeout as a latency', () => {
    const gl = createGradientLimit({ initialLimit: 8, windowSamples: 1, windowMs: 1 });
    for (let t = 1; t <= PROBE_WINDOWS; t++) gl.sample(10, t - 1, t, 1);
    gl.drop(140, 10, 150, 30);
    expect(gl.limit()).toBe(4);
    // The timeout is a (censored) sample of the window that the cut opened: with one answer of
    // 10 ms, the window's latency is their mean.
    gl.sample(10, 151, 152, 1);
    expect(gl.latencyMs()).toBe(75);
    expect(gl.state().noLoadMs).toBe(10);
  });

  it('ignores drops while it probes the no-load latency, and with a backoff ratio of 1', () => {
    const probing = createGradientLimit({ initialLimit: 8, windowSamples: 5 });
    probing.drop(140, 0, 150, 4);
    expect(probing.state()).toMatchObject({ limit: GRADIENT_LIMIT_DEFAULTS.minLimit, estimate: 8, drops: 0 });
    const off = createGradientLimit({ initialLimit: 8, windowSamples: 1, windowMs: 1000, backoffRatio: 1 });
    for (let t = 1; t <= PROBE_WINDOWS; t++) off.sample(10, t - 1, t, 1);
    off.drop(140, 10, 150, 8);
    expect(off.state()).toMatchObject({ limit: 8, drops: 0 });
  });

  it('cuts a limit far above the dependency’s concurrency within one timeout when it suddenly slows down', () => {
    // 16 workers × 20 ms, 24 callers (below capacity, the limit rises well above 16); at t = 5 s the
    // service time becomes 200 ms, above the 100 ms timeout: every call sent then times out.
    const gl = createGradientLimit({ probeIntervalMs: 60_000, initialLimit: 40 }, createRandom(2));
    const busy: Array<{ start: number; until: number }> = [];
    let inFlight = 0;
    let cutAt: number | undefined;
    for (let t = 0; t < 5_300; t++) {
      for (let i = busy.length - 1; i >= 0; i--) {
        const job = busy[i]!;
        if (job.until <= t) {
          busy.splice(i, 1);
          gl.sample(t - job.start, job.start, t, inFlight);
          inFlight--;
        } else if (t - job.start >= 100) {
          busy.splice(i, 1);
          gl.drop(t - job.start, job.start, t, inFlight);
          inFlight--;
        }
      }
      while (inFlight < gl.limit() && inFlight < 24) {
        inFlight++;
        busy.push({ start: t, until: t + (t >= 5_000 ? 200 : 20) });
      }
      if (t === 4_999) expect(gl.limit()).toBeGreaterThanOrEqual(24);
      if (cutAt === undefined && t > 5_000 && gl.limit() <= 12) cutAt = t;
    }
    expect(cutAt).toBeDefined();
    expect(cutAt! - 5_000).toBeLessThanOrEqual(110);
  });

  it('stays an integer within [minLimit, maxLimit] whatever it is fed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 50 }),
        fc.array(
          fc.record({
            rtt: fc.oneof(fc.double({ min: 0, max: 1e6 }), fc.constant(Number.NaN), fc.constant(-1)),
            dt: fc.integer({ min: 0, max: 5000 }),
            inFlight: fc.integer({ min: 0, max: 200 }),
          }),
          { maxLength: 300 },
        ),
        (minLimit, extra, samples) => {
          const maxLimit = minLimit + extra;
          const gl = createGradientLimit(
            {
              minLimit,
              maxLimit,
              initialLimit: minLimit,
              windowSamples: 2,
              windowMs: 10,
              probeIntervalMs: 2000,
            },
            () => 0.3,
          );
          let now = 0;
          for (const s of samples) {
            now += s.dt;
            gl.sample(s.rtt, now - 1, now, s.inFlight);
            const limit = gl.limit();
            expect(Number.isInteger(limit)).toBe(true);
            expect(limit).toBeGreaterThanOrEqual(minLimit);
            expect(limit).toBeLessThanOrEqual(maxLimit);
          }
        },
      ),
    );
  });

  it('never more than halves per window, and never grows while latency is above the tolerance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1, max: 1000, noNaN: true }), { minLength: 2, maxLength: 200 }),
        (rtts) => {
          const gl = createGradientLimit({
            initialLimit: 200,
            windowSamples: 1,
            windowMs: 1,
            probeIntervalMs: 8e7,
          });
          let t = 0;
          for (const rtt of rtts) {
            const before = gl.state();
            t++;
            gl.sample(rtt, t - 1, t, 1000);
            const after = gl.state();
            if (before.probing || after.rttMs === before.rttMs) continue;
            expect(after.estimate).toBeGreaterThanOrEqual(
              Math.max(GRADIENT_LIMIT_DEFAULTS.minLimit, before.estimate * 0.9) - 1e-9,
            );
            if (after.rttMs! > after.noLoadMs! * 1.05 + 1)
              expect(after.estimate).toBeLessThanOrEqual(before.estimate);
          }
        },
      ),
    );
  });

  it('refuses unusable options, naming them', () => {
    const bad: Array<[GradientLimitOptions, string]> = [
      [{ minLimit: 0 }, 'minLimit'],
      [{ maxLimit: 2, minLimit: 3 }, 'maxLimit'],
      [{ initialLimit: 2, minLimit: 4 }, 'initialLimit'],
      [{ tolerance: 0.9 }, 'tolerance'],
      [{ noiseMs: -1 }, 'noiseMs'],
      [{ smoothing: 0 }, 'smoothing'],
      [{ windowMs: Number.NaN }, 'windowMs'],
      [{ windowSamples: 1.5 }, 'windowSamples'],
      [{ probeIntervalMs: -1 }, 'probeIntervalMs'],
      [{ probeJitter: 1 }, 'probeJitter'],
      [{ backoffRatio: 0 }, 'backoffRatio'],
      [{ backoffRatio: 1.5 }, 'backoffRatio'],
    ];
    for (const [options, option] of bad) {
      expect(() => createGradientLimit(options), option).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option }),
      );
    }
    expect(createGradientLimit({ maxLimit: 8, minLimit: 2 }).state().estimate).toBe(8);
  });
});

/**
 * One call every 5 ms until `untilMs`, the limit always in use (callers wait for a slot): round
 * trips of 50 ms, then of 150 ms from `slowFromMs` on. Calls `each` after every sample with the
 * time, whether the limit is probing and the probes begun so far; returns when each probe began.
 */
function stepLatency(
  gl: GradientLimit,
  slowFromMs: number,
  untilMs: number,
  each: (t: number, probing: boolean, probesSoFar: number) => void,
): number[] {
  const probes: number[] = [];
  let wasProbing = true;
  for (let t = 5; t <= untilMs; t += 5) {
    const rtt = t < slowFromMs ? 50 : 150;
    gl.sample(rtt, t - rtt, t, gl.limit());
    const probing = gl.state().probing;
    if (probing && !wasProbing) probes.push(t);
    each(t, probing, probes.length);
    wasProbing = probing;
  }
  return probes;
}
