import type { FakeClock } from '../testing/fake-clock.js';
import type { Balancer } from './balancer.js';
import type { InstanceOutcome } from './instance-outcome.js';

/** What an instance does with one call arriving at `nowMs`. */
export type Behaviour = (origin: string, nowMs: number) => { outcome: InstanceOutcome; latencyMs: number };

/** One attempt as the driver saw it. */
export interface AttemptRecord {
  atMs: number;
  origin: string;
  kind: 'first' | 'retry';
  outcome: InstanceOutcome;
}

/** Result of a drive: every attempt, and the calls that ended in success. */
export interface Drive {
  attempts: AttemptRecord[];
  calls: number;
  succeeded: number;
  /** Attempts received by `origin`. */
  received(origin: string, fromMs?: number, toMs?: number): number;
}

function drive(attempts: AttemptRecord[], calls: number, succeeded: number): Drive {
  return {
    attempts,
    calls,
    succeeded,
    received: (origin, fromMs = Number.NEGATIVE_INFINITY, toMs = Number.POSITIVE_INFINITY) =>
      attempts.filter((a) => a.origin === origin && a.atMs >= fromMs && a.atMs < toMs).length,
  };
}

/**
 * Runs `calls` calls one after the other through `balancer` (the way a client without concurrency
 * would), each with up to `attempts` attempts: a first pick, then retries after any failure. The
 * fake clock moves by each attempt's latency and by `gapMs` between calls.
 */
export function driveSequential(
  balancer: Balancer,
  clock: FakeClock,
  behave: Behaviour,
  options: { calls: number; attempts?: number; gapMs?: number },
): Drive {
  const maxAttempts = options.attempts ?? 2;
  const records: AttemptRecord[] = [];
  let succeeded = 0;
  for (let c = 0; c < options.calls; c++) {
    const failed: number[] = [];
    for (let a = 0; a < maxAttempts; a++) {
      const now = clock.now();
      const i = a === 0 ? balancer.pick(now) : balancer.pickRetry(failed, now);
      const origin = balancer.origin(i)!;
      const { outcome, latencyMs } = behave(origin, now);
      records.push({ atMs: now, origin, kind: a === 0 ? 'first' : 'retry', outcome });
      clock.advance(latencyMs);
      balancer.finished(i, outcome, latencyMs, clock.now());
      if (outcome === 'success') {
        succeeded++;
        break;
      }
      if (!failed.includes(i)) failed.push(i);
    }
    clock.advance(options.gapMs ?? 0);
  }
  return drive(records, options.calls, succeeded);
}

/**
 * Runs `calls` calls with `concurrency` of them in flight (each worker starts its next call when
 * its last one ends), one attempt each; completions are timers of the fake clock.
 */
export function driveConcurrent(
  balancer: Balancer,
  clock: FakeClock,
  behave: Behaviour,
  options: { calls: number; concurrency: number },
): Drive {
  const records: AttemptRecord[] = [];
  let started = 0;
  let succeeded = 0;
  const start = () => {
    if (started >= options.calls) return;
    started++;
    const now = clock.now();
    const i = balancer.pick(now);
    const origin = balancer.origin(i)!;
    const { outcome, latencyMs } = behave(origin, now);
    records.push({ atMs: now, origin, kind: 'first', outcome });
    clock.setTimeout(() => {
      balancer.finished(i, outcome, latencyMs, clock.now());
      if (outcome === 'success') succeeded++;
      start();
    }, latencyMs);
  };
  for (let w = 0; w < options.concurrency; w++) start();
  while (clock.pendingTimers() > 0) clock.advance(1_000);
  return drive(records, options.calls, succeeded);
}
