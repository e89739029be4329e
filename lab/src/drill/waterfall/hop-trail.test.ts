import type { IncomingMessage } from 'node:http';
import { createFakeClock, Deadline } from 'prazo';
import { describe, expect, it } from 'vitest';
import { createCheckoutSampling } from './checkout-sampling.js';
import { answerTrail } from './hop-trail.js';
import { epochNow, parseTrail } from './trail.js';

const T0 = 1_800_000_000_000;
const request = (userDeadlineMs: number, deadline?: Deadline) =>
  ({
    headers: { 'x-deadline-epoch-ms': String(T0 + userDeadlineMs) },
    ...(deadline ? { deadline } : {}),
  }) as unknown as IncomingMessage;

describe("a service's trail and the gateway's sampling", () => {
  it('answers with its own spans (the time left of prazo’s deadline on arrival) before its dependency’s', () => {
    const deadline = Deadline.at(T0 + 1_900, createFakeClock(T0));
    const below = answerTrail(
      'inventory',
      true,
      request(2_000),
      { receivedMs: T0 + 5, slotMs: -1, callStartMs: T0 + 6, callEndMs: T0 + 260 },
      { status: 200 },
    );
    const trail = answerTrail(
      'orders',
      false,
      request(2_000, deadline),
      { receivedMs: T0 + 2, slotMs: -1, callStartMs: T0 + 3, callEndMs: T0 + 262 },
      { status: 200, trail: below },
    );
    expect(parseTrail(trail).map((s) => [s.hop, s.kind, s.startMs - T0, s.durationMs, s.note])).toEqual([
      ['orders', 'hop', 2, 260, '1 898 ms left on arrival'],
      ['orders', 'call', 3, 259, '200'],
      ['inventory', 'hop', 5, 255, ''],
      ['inventory', 'attempt', 6, 254, '#1 original 200'],
    ]);
  });

  it('names the error code of a call that failed without an attempt of its own to show', () => {
    const trail = answerTrail(
      'orders',
      false,
      request(2_000),
      { receivedMs: T0, slotMs: -1, callStartMs: T0 + 1, callEndMs: T0 + 1 },
      { status: 504, body: '{"error":"DEADLINE_INSUFFICIENT"}' },
    );
    expect(parseTrail(trail)[1]?.note).toBe('504 DEADLINE_INSUFFICIENT');
  });

  it('says so when the edge’s client reported no attempt, rather than draw one', () => {
    const trail = answerTrail(
      'inventory',
      true,
      request(2_000),
      { receivedMs: T0, slotMs: -1, callStartMs: T0 + 1, callEndMs: T0 + 3 },
      { status: 502, body: '{"error":"BrokenCircuitError"}', spans: [] },
    );
    expect(parseTrail(trail).map((s) => [s.kind, s.startMs - T0, s.durationMs, s.note])).toEqual([
      ['hop', 0, 3, ''],
      ['error', 3, 0, '502 BrokenCircuitError; no attempt reported'],
    ]);
  });

  it('keeps the slowest 200 and a failing /checkout; a 200 after the user gave up is a failure', () => {
    const sampling = createCheckoutSampling('naive', 'gateway', () => 0.99);
    const offer = (status: number, elapsedMs: number) =>
      sampling.offer(request(2_000), 'hedged', status, T0, -1, T0 + 1, T0 + elapsedMs, { status });
    offer(200, 300);
    offer(200, 1_200);
    offer(200, 900);
    offer(200, 8_000); // answered after the user's 2 s: not a success for the user
    offer(502, 9_000);
    const samples = sampling.take();
    expect(samples.successes).toBe(3);
    expect(samples.failures).toBe(2);
    expect(samples.slow).toMatchObject({
      pick: 'slow',
      status: 200,
      elapsedMs: 1_200,
      userDeadlineMs: 2_000,
      limitMs: null,
    });
    // The first failure is kept; the second replaces it with probability 1/2 (the draw said no).
    expect(samples.failing).toMatchObject({ pick: 'failing', status: 200, elapsedMs: 8_000, candidates: 2 });
    expect(samples.failing!.rows.map((r) => `${r.hop} ${r.kind}`)).toEqual(['gateway hop', 'gateway call']);
  });

  it('leaves out a /checkout received before it was reset (the unmeasured pre-warm)', () => {
    const sampling = createCheckoutSampling('naive', 'gateway');
    const before = epochNow() - 5;
    sampling.reset();
    sampling.offer(request(2_000), 'hedged', 502, before, -1, before, before + 1, { status: 502 });
    expect(sampling.peek()).toMatchObject({ failing: null, failures: 0 });
    const after = epochNow() + 1;
    sampling.offer(request(2_000), 'hedged', 502, after, -1, after, after + 1, { status: 502 });
    expect(sampling.peek().failures).toBe(1);
  });

  it('samples a /checkout the shop’s pool refused, with its wait for a slot', () => {
    const sampling = createCheckoutSampling('prazo', 'gateway');
    sampling.ended(
      request(2_000),
      'hedged',
      503,
      { receivedMs: T0, slotMs: T0 + 150, callStartMs: -1, callEndMs: -1 },
      null,
    );
    const { failing } = sampling.peek();
    expect(failing?.elapsedMs).toBe(150);
    expect(failing?.rows.map((r) => [r.kind, r.durationMs, r.note])).toEqual([
      ['hop', 150, ''],
      ['pool', 150, 'refused'],
    ]);
  });
});
