import type { AdaptiveThrottle } from '../../policy/adaptive-throttle.js';
import { judgeStatus } from '../../policy/classify.js';
import type { ConcurrencyGate } from '../../policy/concurrency-gate.js';
import type { Call, DependencyResponse } from '../call.js';
import {
  type DependencyContext,
  Epilogue,
  failLater,
  type Handler,
  type Outcome,
  type Step,
} from '../pipeline.js';
import { waitForSlot } from './concurrency-step.js';
import { acceptedAnswer, throttleCounts, throttled } from './throttle-step.js';

/**
 * The overload protections of a call, when either is on: adaptive throttling (`throttle`, see
 * throttle-step.ts), then the adaptive concurrency limit (`concurrency`, see concurrency-step.ts).
 * A call the throttle rejects fails with `THROTTLED` and never takes a slot; one the limit refuses
 * fails with `CONCURRENCY_LIMITED` and is not counted by the throttle (it never left).
 *
 * One step for both, so that the healthy path — nothing rejected, a slot free — costs one outcome
 * (`Guarded`) and one clock read when the call ends, for the slot's release (and the limit's sample)
 * and the throttle's count together, rather than one of each per protection: on a call of
 * ≈ 2 µs of the client's own work, each was ≈ 0.1 µs (BENCHMARKS.md, "Overload protections").
 */
export function overloadStep(
  ctx: DependencyContext,
  throttle: AdaptiveThrottle | null,
  gate: ConcurrencyGate | null,
): Step {
  return (next) => (call, nowMs, out) => {
    if (throttle !== null) {
      const probability = throttle.reject(nowMs, ctx.random());
      if (probability > 0) {
        failLater(out, throttled(ctx, probability, call, nowMs));
        return;
      }
    }
    if (gate === null || gate.tryAcquire(nowMs)) {
      guarded(ctx, throttle, gate, call, next, nowMs, out);
      return;
    }
    // No slot free: the call waits for one (or fails with CONCURRENCY_LIMITED), then runs in it.
    waitForSlot(ctx, gate, call, nowMs).then(
      () => {
        const admitted = ctx.clock.now();
        call.ledger.queued(nowMs, admitted);
        guarded(ctx, throttle, gate, call, next, admitted, out);
      },
      (error: unknown) => out.failed(error),
    );
  };
}

/**
 * Sends the call in its slot and, as it ends, gives the slot back with what the limit learns from
 * it and counts the outcome for the throttle.
 */
function guarded(
  ctx: DependencyContext,
  throttle: AdaptiveThrottle | null,
  gate: ConcurrencyGate | null,
  call: Call,
  next: Handler,
  startedMs: number,
  out: Outcome,
): void {
  const guard = new Guarded(ctx, throttle, gate, call, startedMs, out);
  try {
    next(call, startedMs, guard);
  } catch (error) {
    // The slot is given back now, the failure told on the next turn (see `Outcome`).
    failLater(out, failed(ctx, throttle, gate, call, startedMs, error));
  }
}

/** The outcome of a call that holds a slot of the concurrency limit, or that the throttle counts. */
class Guarded extends Epilogue {
  readonly #ctx: DependencyContext;
  readonly #throttle: AdaptiveThrottle | null;
  readonly #gate: ConcurrencyGate | null;
  readonly #call: Call;
  readonly #startedMs: number;

  constructor(
    ctx: DependencyContext,
    throttle: AdaptiveThrottle | null,
    gate: ConcurrencyGate | null,
    call: Call,
    startedMs: number,
    out: Outcome,
  ) {
    super(out);
    this.#ctx = ctx;
    this.#throttle = throttle;
    this.#gate = gate;
    this.#call = call;
    this.#startedMs = startedMs;
  }

  protected ended(response: DependencyResponse | undefined, error: unknown): void {
    const ctx = this.#ctx;
    const gate = this.#gate;
    const startedMs = this.#startedMs;
    if (response === undefined) {
      failed(ctx, this.#throttle, gate, this.#call, startedMs, error);
      return;
    }
    const now = ctx.clock.now();
    // The limit learns from the answers the dependency served; one it failed (5xx) or refused
    // (429, 502–504: it sheds load) is no sample, and a refusal says it is overloaded.
    if (gate !== null) {
      const verdict = judgeStatus(response.status);
      gate.release(
        verdict.failed || verdict.refused ? undefined : roundTrip(ctx, response, now - startedMs),
        startedMs,
        now,
        verdict.refused,
      );
    }
    if (this.#throttle !== null) this.#throttle.record(acceptedAnswer(this.#call, response), now);
  }
}

/**
 * The round trip the limit samples: the call's, less the distance of the instance that answered
 * (`Balancer.distanceMs`) when the fleet has several. The limit judges the dependency's queue
 * against one no-load latency; an instance farther away than the others (a longer path, a slower
 * machine) answers later with no queue at all, and taken as it is, its share of the calls would
 * read as queueing and cut the limit while every instance has idle workers — the callers would
 * then wait at the client's door for nothing. How to share the calls among near and far instances
 * is the balancer's to weigh.
 */
function roundTrip(ctx: DependencyContext, response: DependencyResponse, elapsedMs: number): number {
  if (ctx.sole !== -1) return elapsedMs;
  // The attempt that answered: the last one recorded with the response's status.
  const attempts = response.attempts;
  for (let k = attempts.length - 1; k >= 0; k--) {
    const attempt = attempts[k]!;
    if (attempt.phase !== 'response' || attempt.status !== response.status) continue;
    const distance = ctx.balancer.distanceMs(attempt.instance);
    return distance < elapsedMs ? elapsedMs - distance : 0;
  }
  return elapsedMs;
}

/** Gives the slot of a call that ended in `error` back, counts it for the throttle, returns `error`. */
function failed(
  ctx: DependencyContext,
  throttle: AdaptiveThrottle | null,
  gate: ConcurrencyGate | null,
  call: Call,
  startedMs: number,
  error: unknown,
): unknown {
  const now = ctx.clock.now();
  // An attempt that ran out of time was fed to the limit when it did (a drop, and a censored
  // sample: `ConcurrencyGate.abandon`); the call's own end adds nothing more.
  if (gate !== null) gate.release(undefined, startedMs, now);
  if (throttle !== null && throttleCounts(ctx, call, error)) throttle.record(false, now);
  return error;
}
