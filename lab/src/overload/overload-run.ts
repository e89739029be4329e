import { type Dependency, dependency } from 'prazo';
import { createAdmission } from 'prazo/http';
import { LatencyHistogram } from 'prazo/latency';
import { undici } from '../undici.js';
import { type CapacitySupplier, startCapacitySupplier } from './capacity-supplier.js';

/** The configurations the overload experiment compares, side by side on the same offered load. */
export type OverloadConfig = 'naive' | 'prazo' | 'prazo-protected';

/** Every configuration, in report order. */
export const OVERLOAD_CONFIGS: readonly OverloadConfig[] = Object.freeze([
  'naive',
  'prazo',
  'prazo-protected',
]);

/** Options of {@link runOverload}. */
export interface OverloadRunOptions {
  /** Supplier workers. @default 8 */
  workers?: number;
  /** Supplier service time per request, ms. @default 25 */
  serviceMs?: number;
  /** Offered load as a multiple of the supplier's capacity. @default 3 */
  factor?: number;
  /**
   * How long load is offered to each configuration, ms. The figures count the requests sent after
   * its first third (the queues have built up by then: sustained overload, not its first second).
   * @default 9000
   */
  durationMs?: number;
  /** The user's deadline: an answer later than this is useless, ms. @default 500 */
  userDeadlineMs?: number;
  /** Configurations to run. @default every one */
  configs?: readonly OverloadConfig[];
  /** Called when a configuration starts and ends. */
  onProgress?: (config: OverloadConfig, stage: 'start' | 'end') => void;
  /** Aborting it ends the current configuration's load at once and runs no further one. */
  signal?: AbortSignal;
}

/** What one configuration achieved under the offered load. */
export interface OverloadFigures {
  config: OverloadConfig;
  /** Requests offered per second. */
  offeredRps: number;
  /** The supplier's capacity, requests per second. */
  capacityRps: number;
  /** Answers (2xx) that reached the user before the user's deadline, among the requests measured. */
  inTime: number;
  /** The same per second. */
  goodputRps: number;
  /** goodput ÷ capacity. */
  goodputShare: number;
  /** Share of user requests answered in time. */
  successShare: number;
  /** p50 and p99 of the requests answered in time, ms. */
  admittedP50Ms: number | null;
  admittedP99Ms: number | null;
  /** Answers (2xx) that came after the user's deadline: work the user no longer waited for. */
  lateSuccesses: number;
  /** Requests the supplier's workers finished for a caller who had already gone. */
  supplierWorkForNobody: number;
  /** Supplier requests received per user request (retries included). */
  amplification: number;
  /** Longest the supplier's internal queue grew. */
  supplierPeakQueue: number;
}

const NAIVE = Object.freeze({ timeoutMs: 30_000, attempts: 3, connections: 256 });

interface Caller {
  /** Resolves with the status, or rejects. */
  call(signal: AbortSignal): Promise<number>;
  close(): Promise<void>;
}

function naiveCaller(origin: string): Caller {
  const pool = new undici.Pool(origin, {
    connections: NAIVE.connections,
    headersTimeout: NAIVE.timeoutMs,
    bodyTimeout: NAIVE.timeoutMs,
  });
  return {
    async call(signal) {
      let status = 0;
      for (let attempt = 1; attempt <= NAIVE.attempts; attempt++) {
        try {
          const res = await pool.request({ path: '/item', method: 'GET', signal });
          await res.body.dump();
          status = res.statusCode;
          if (status < 500) return status;
        } catch (error) {
          if (signal.aborted) throw error;
          if (attempt === NAIVE.attempts) throw error;
        }
      }
      return status;
    },
    close: () => pool.destroy(),
  };
}

function prazoCaller(origin: string, userDeadlineMs: number, serviceMs: number, protect: boolean): Caller {
  const dep: Dependency = dependency({
    name: 'supplier',
    origins: [origin],
    // The healthy p99 a calibration would measure: the service time and a little jitter.
    latency: { p99Ms: Math.ceil(serviceMs * 1.3), p95Ms: Math.ceil(serviceMs * 1.15) },
    userDeadlineMs,
    // A steady overload: the wait queue is served newest first while it stands (docs/overload.md,
    // "The order of the wait queue"), so the calls admitted are answered early in their deadline.
    ...(protect ? { concurrency: { order: 'adaptive-lifo' as const }, throttle: true } : {}),
  });
  return {
    async call(signal) {
      const res = await dep.request({ path: '/item', signal });
      await res.body.dump();
      return res.status;
    },
    close: () => dep.close(),
  };
}

/**
 * Offers `factor` × the supplier's capacity, open loop (arrivals do not wait for answers, as users
 * do not), to each configuration in turn, each against a fresh supplier:
 * - `naive`: undici with a 30 s timeout and 3 blind attempts, a deadline-blind supplier;
 * - `prazo`: prazo's client (calibrated timeouts, retry budget, deadline propagation) and prazo/http
 *   on the supplier, without the overload protections;
 * - `prazo-protected`: the same with the client's adaptive concurrency limit (its wait queue served
 *   newest first while it stands: `order: 'adaptive-lifo'`) and throttle, and the
 *   supplier's deadline-aware admission with an in-flight limit of its workers and a CoDel queue.
 */
export async function runOverload(options: OverloadRunOptions = {}): Promise<OverloadFigures[]> {
  const workers = options.workers ?? 8;
  const serviceMs = options.serviceMs ?? 25;
  const factor = options.factor ?? 3;
  const durationMs = options.durationMs ?? 9_000;
  const userDeadlineMs = options.userDeadlineMs ?? 500;
  const results: OverloadFigures[] = [];
  for (const config of options.configs ?? OVERLOAD_CONFIGS) {
    if (options.signal?.aborted) break;
    options.onProgress?.(config, 'start');
    const supplier = await startCapacitySupplier({
      workers,
      serviceMs,
      front:
        config === 'naive'
          ? 'plain'
          : config === 'prazo'
            ? 'deadline'
            : createAdmission({ maxInFlight: workers }),
    });
    const caller =
      config === 'naive'
        ? naiveCaller(supplier.origin)
        : prazoCaller(supplier.origin, userDeadlineMs, serviceMs, config === 'prazo-protected');
    try {
      results.push(await drive(config, supplier, caller, factor, durationMs, userDeadlineMs, options.signal));
    } finally {
      await caller.close();
      await supplier.close();
    }
    options.onProgress?.(config, 'end');
  }
  return results;
}

async function drive(
  config: OverloadConfig,
  supplier: CapacitySupplier,
  caller: Caller,
  factor: number,
  durationMs: number,
  userDeadlineMs: number,
  signal: AbortSignal | undefined,
): Promise<OverloadFigures> {
  const offeredRps = supplier.capacityRps * factor;
  const admitted = new LatencyHistogram();
  const stop = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let measured = 0;
  let inTime = 0;
  let lateSuccesses = 0;
  const start = performance.now();
  const settleMs = durationMs / 3;
  const one = (): void => {
    const t0 = performance.now();
    const counts = t0 - start >= settleMs;
    if (counts) measured++;
    // The user gives up at the deadline; the caller's own timeouts decide what it does meanwhile.
    const gone = AbortSignal.any([stop.signal, AbortSignal.timeout(userDeadlineMs * 4)]);
    const p = caller.call(gone).then(
      (status) => {
        const ms = performance.now() - t0;
        if (counts && status >= 200 && status < 300) {
          if (ms <= userDeadlineMs) {
            inTime++;
            admitted.record(ms);
          } else lateSuccesses++;
        }
      },
      () => {},
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - start;
      const due = Math.min(
        Math.floor((elapsed * offeredRps) / 1000),
        Math.floor((durationMs * offeredRps) / 1000),
      );
      while (sent < due) {
        sent++;
        one();
      }
      if (elapsed >= durationMs || signal?.aborted === true) {
        clearInterval(tick);
        resolve();
      }
    }, 2);
  });
  // Answers still on their way get the user's deadline to arrive; then the rest is abandoned.
  await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, userDeadlineMs + 50))]);
  stop.abort(new Error('overload run over'));
  await Promise.allSettled(inFlight);
  const stats = supplier.stats();
  const goodputRps = (inTime * 1000) / (durationMs - settleMs);
  return {
    config,
    offeredRps,
    capacityRps: supplier.capacityRps,
    inTime,
    goodputRps,
    goodputShare: goodputRps / supplier.capacityRps,
    successShare: measured === 0 ? 0 : inTime / measured,
    admittedP50Ms: admitted.count === 0 ? null : admitted.percentile(50),
    admittedP99Ms: admitted.count === 0 ? null : admitted.percentile(99),
    lateSuccesses,
    supplierWorkForNobody: stats.servedForNobody,
    amplification: sent === 0 ? 0 : stats.received / sent,
    supplierPeakQueue: stats.peakQueue,
  };
}
