import type { DependencyOptions } from 'prazo';
import { type Dependency, dependency } from 'prazo';
import { undici } from '../undici.js';
import { startCapacitySupplier } from './capacity-supplier.js';
import { OVERLOAD_CONFIGS, type OverloadConfig } from './overload-run.js';

/** The clients the transient experiment compares, one after the other on the same schedule: the overload experiment's. */
export type TransientConfig = OverloadConfig;

/** Every configuration, in report order. */
export const TRANSIENT_CONFIGS: readonly TransientConfig[] = OVERLOAD_CONFIGS;

/** Options of {@link runTransient}. Durations in ms. */
export interface TransientRunOptions {
  /** Supplier workers before and after the trigger. @default 8 */
  workers?: number;
  /** Service time before and after the trigger. @default 20 */
  serviceMs?: number;
  /** Requests offered per second, open loop. @default 200 (50 % of 8 workers × 20 ms) */
  rps?: number;
  /** The user's deadline. @default 400 */
  userDeadlineMs?: number;
  /** Load before the trigger (the clients learn the healthy dependency). @default 3000 */
  beforeMs?: number;
  /** Length of the trigger. @default 2000 */
  triggerMs?: number;
  /** Service time during the trigger. @default 2 × `serviceMs` (40 ms) */
  triggerServiceMs?: number;
  /** Workers during the trigger. @default 3 (with the other defaults: 75 rps, 37.5 % of what arrives) */
  triggerWorkers?: number;
  /** Load after the trigger. @default 5000 */
  afterMs?: number;
  /** The options the protected client adds to prazo's. @default { concurrency: true, throttle: true } */
  protections?: Pick<DependencyOptions, 'concurrency' | 'throttle'>;
  /** Configurations to run. @default every one */
  configs?: readonly TransientConfig[];
  /** Aborting it ends the current configuration's load and runs no further one. */
  signal?: AbortSignal;
}

/** Success over one span of the run, by the time requests were sent. */
export interface TransientSpan {
  /** Requests sent in the span. */
  sent: number;
  /** Of those, answered 2xx within the user's deadline. */
  inTime: number;
  /** inTime ÷ sent (0 when none was sent). */
  success: number;
}

/** What one configuration achieved over the transient. */
export interface TransientFigures {
  config: TransientConfig;
  offeredRps: number;
  /** The supplier's capacity before and during the trigger, requests per second. */
  capacityRps: number;
  triggerCapacityRps: number;
  /** Success of the requests sent in the second before the trigger. */
  before: TransientSpan;
  /** During the trigger. */
  trigger: TransientSpan;
  /** The ideal success during the trigger: capacity ÷ arrivals (at most 1). */
  triggerIdeal: number;
  /** The first second after the trigger's end, then from 1 s and from 3 s after it to the end. */
  after0to1s: TransientSpan;
  after1s: TransientSpan;
  after3s: TransientSpan;
  /**
   * Time from the trigger's end to the start of the first 250 ms slice from which every slice to
   * the end has ≥ 90 % success, ms; null when it never settles.
   */
  recoveryMs: number | null;
  /** Success per 250 ms slice of send time, from the start of the run. */
  timeline: number[];
  /** The longest the supplier's queue was in each 250 ms slice. */
  queueTimeline: number[];
  /** The lowest concurrency limit (plus the slots its abandoned work held) in each slice; null for clients without one. */
  limitTimeline: Array<number | null>;
  /** Requests the supplier received per request sent (retries included). */
  amplification: number;
  /** Requests the supplier's workers finished for a caller who had already gone. */
  supplierWorkForNobody: number;
  /** Most requests waiting for a supplier worker at once. */
  supplierPeakQueue: number;
  /** The highest concurrency limit of the protected client over the run (null for the others). */
  clientPeakLimit: number | null;
}

const SLICE_MS = 250;
const NAIVE = Object.freeze({ timeoutMs: 100, attempts: 3, connections: 256 });

interface Caller {
  call(signal: AbortSignal): Promise<number>;
  close(): Promise<void>;
  /** The concurrency limit now and the slots abandoned work holds, or null. */
  limit(): { limit: number; abandoned: number } | null;
}

function naiveCaller(origin: string): Caller {
  const pool = new undici.Pool(origin, { connections: NAIVE.connections });
  return {
    async call(signal) {
      let status = 0;
      for (let attempt = 1; attempt <= NAIVE.attempts; attempt++) {
        try {
          const res = await pool.request({
            path: '/item',
            method: 'GET',
            signal: AbortSignal.any([signal, AbortSignal.timeout(NAIVE.timeoutMs)]),
          });
          await res.body.dump();
          status = res.statusCode;
          if (status < 500) return status;
        } catch (error) {
          if (signal.aborted || attempt === NAIVE.attempts) throw error;
        }
      }
      return status;
    },
    close: () => pool.destroy(),
    limit: () => null,
  };
}

function prazoCaller(
  origin: string,
  userDeadlineMs: number,
  serviceMs: number,
  protections: Pick<DependencyOptions, 'concurrency' | 'throttle'> | undefined,
): Caller {
  const dep: Dependency = dependency({
    name: 'supplier',
    origins: [origin],
    // A calibrated p99 with room for the queueing of a busy machine: 3 × the service time (the
    // issue's figure for 4 × 20 ms at 60 %), so a read timeout of 4.2 × it.
    latency: { p99Ms: serviceMs * 3, p95Ms: Math.ceil(serviceMs * 1.5) },
    userDeadlineMs,
    attempts: 3,
    ...protections,
  });
  return {
    async call(signal) {
      const res = await dep.request({ path: '/item', signal });
      await res.body.dump();
      return res.status;
    },
    close: () => dep.close(),
    limit: () => {
      const c = dep.overload().concurrency;
      return c === undefined || c === null ? null : { limit: c.limit, abandoned: c.abandoned };
    },
  };
}

/**
 * The transient experiment: a supplier of `workers` × `serviceMs` (a deadline-blind FIFO queue that
 * keeps serving requests whose caller left) is offered `rps` open loop; after `beforeMs` its
 * capacity drops for `triggerMs` (service time `triggerServiceMs`, `triggerWorkers` workers), then
 * returns, and load goes on for `afterMs`. Each configuration runs against a fresh supplier:
 * - `naive`: undici, 3 attempts of 100 ms each, no budget;
 * - `prazo`: `dependency()` with the calibrated latency, 3 attempts, the retry budget;
 * - `prazo-protected`: the same with `protections` (the overload protections).
 *
 * Success counts the requests answered 2xx within the user's deadline, by the time they were sent.
 */
export async function runTransient(options: TransientRunOptions = {}): Promise<TransientFigures[]> {
  const workers = options.workers ?? 8;
  const serviceMs = options.serviceMs ?? 20;
  const rps = options.rps ?? 200;
  const userDeadlineMs = options.userDeadlineMs ?? 400;
  const beforeMs = options.beforeMs ?? 3_000;
  const triggerMs = options.triggerMs ?? 2_000;
  const triggerServiceMs = options.triggerServiceMs ?? serviceMs * 2;
  const triggerWorkers = options.triggerWorkers ?? Math.min(3, workers);
  const afterMs = options.afterMs ?? 5_000;
  const protections = options.protections ?? { concurrency: true, throttle: true };
  const totalMs = beforeMs + triggerMs + afterMs;
  const results: TransientFigures[] = [];
  for (const config of options.configs ?? TRANSIENT_CONFIGS) {
    if (options.signal?.aborted) break;
    const supplier = await startCapacitySupplier({ workers, serviceMs, front: 'plain' });
    const caller =
      config === 'naive'
        ? naiveCaller(supplier.origin)
        : prazoCaller(
            supplier.origin,
            userDeadlineMs,
            serviceMs,
            config === 'prazo-protected' ? protections : undefined,
          );
    const slices = Math.ceil(totalMs / SLICE_MS);
    const sentBy = new Float64Array(slices);
    const inTimeBy = new Float64Array(slices);
    const queueBy = new Array<number>(slices).fill(0);
    const limitBy = new Array<number | null>(slices).fill(null);
    let sent = 0;
    let peakLimit: number | null = null;
    const pending = new Set<Promise<void>>();
    const stop = new AbortController();
    try {
      const start = performance.now();
      let triggered = false;
      let restored = false;
      await new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          const elapsed = performance.now() - start;
          if (!triggered && elapsed >= beforeMs) {
            triggered = true;
            supplier.setCapacity(triggerWorkers, triggerServiceMs);
          }
          if (!restored && elapsed >= beforeMs + triggerMs) {
            restored = true;
            supplier.setCapacity(workers, serviceMs);
          }
          const now = Math.min(slices - 1, Math.floor(elapsed / SLICE_MS));
          queueBy[now] = Math.max(queueBy[now]!, supplier.queued());
          const limit = caller.limit();
          if (limit !== null) {
            if (peakLimit === null || limit.limit > peakLimit) peakLimit = limit.limit;
            const was = limitBy[now];
            limitBy[now] = was === null || was === undefined ? limit.limit : Math.min(was, limit.limit);
          }
          const due = Math.min(Math.floor((elapsed * rps) / 1000), Math.floor((totalMs * rps) / 1000));
          while (sent < due) {
            const slice = Math.min(slices - 1, Math.floor((sent * 1000) / rps / SLICE_MS));
            sent++;
            sentBy[slice]!++;
            const t0 = performance.now();
            const gone = AbortSignal.any([stop.signal, AbortSignal.timeout(userDeadlineMs * 4)]);
            const p = caller.call(gone).then(
              (status) => {
                if (status >= 200 && status < 300 && performance.now() - t0 <= userDeadlineMs)
                  inTimeBy[slice]!++;
              },
              () => {},
            );
            pending.add(p);
            void p.finally(() => pending.delete(p));
          }
          if (elapsed >= totalMs || options.signal?.aborted === true) {
            clearInterval(tick);
            resolve();
          }
        }, 2);
      });
      await Promise.race([
        Promise.all(pending),
        new Promise((resolve) => setTimeout(resolve, userDeadlineMs + 50)),
      ]);
      stop.abort(new Error('transient run over'));
      await Promise.allSettled(pending);
    } finally {
      await caller.close();
      await supplier.close();
    }
    const span = (fromMs: number, toMs: number): TransientSpan => {
      let s = 0;
      let ok = 0;
      for (let i = Math.floor(fromMs / SLICE_MS); i < Math.min(slices, Math.ceil(toMs / SLICE_MS)); i++) {
        s += sentBy[i]!;
        ok += inTimeBy[i]!;
      }
      return { sent: s, inTime: ok, success: s === 0 ? 0 : ok / s };
    };
    const timeline = Array.from(sentBy, (s, i) => (s === 0 ? 0 : inTimeBy[i]! / s));
    const endOfTrigger = beforeMs + triggerMs;
    let settledAt: number | null = null;
    for (let i = timeline.length - 1; i >= Math.floor(endOfTrigger / SLICE_MS); i--) {
      if (timeline[i]! < 0.9) break;
      settledAt = i * SLICE_MS;
    }
    const stats = supplier.stats();
    const triggerCapacityRps = (triggerWorkers * 1000) / triggerServiceMs;
    results.push({
      config,
      offeredRps: rps,
      capacityRps: supplier.capacityRps,
      triggerCapacityRps,
      before: span(beforeMs - 1_000, beforeMs),
      trigger: span(beforeMs, endOfTrigger),
      triggerIdeal: Math.min(1, triggerCapacityRps / rps),
      after0to1s: span(endOfTrigger, endOfTrigger + 1_000),
      after1s: span(endOfTrigger + 1_000, totalMs),
      after3s: span(endOfTrigger + 3_000, totalMs),
      recoveryMs: settledAt === null ? null : Math.max(0, settledAt - endOfTrigger),
      timeline,
      queueTimeline: queueBy,
      limitTimeline: limitBy,
      amplification: sent === 0 ? 0 : stats.received / sent,
      supplierWorkForNobody: stats.servedForNobody,
      supplierPeakQueue: stats.peakQueue,
      clientPeakLimit: peakLimit,
    });
  }
  return results;
}
