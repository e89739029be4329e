import type { BehaviourInput } from '../../behaviour.js';
import type { PeerConfig, PeerSettings } from '../peers/settings.js';
import type { SlotPoolOptions } from './slot-pool.js';

/** The two configurations every drill runs side by side on the same traffic. */
export type CoreConfig = 'naive' | 'prazo';

/** A configuration of the drill: naive, prazo, or one of the peers `--peers` adds. */
export type DrillConfig = CoreConfig | PeerConfig;

/** The drill's configurations without `--peers`, in display order. */
export const DRILL_CONFIGS: readonly CoreConfig[] = Object.freeze(['naive', 'prazo']);

/** Something per configuration: always naive and prazo, the peers when they ran. */
export type PerConfig<T> = Record<CoreConfig, T> & Partial<Record<PeerConfig, T>>;

/** One instance of the supplier (a dependency double in its own process). */
export interface SupplierSpec {
  role: 'supplier';
  instance: number;
  /** Loopback address it listens on (127.0.0.1, 127.0.0.2 …). */
  host: string;
  seed: number;
  behaviour: BehaviourInput;
  /** Workers: the instance serves this many requests at once and queues the rest (FIFO, unbounded). */
  workers: number;
  /**
   * The order writes (`POST /orders`, see `order-writes.ts`): with prazo's idempotency layer
   * (`idempotency`, the prazo column) on the column's Redis (`redisPort`, keys under `redisPrefix`)
   * or, without one, on an in-memory store of the instance; the layer caps a write's deadline at
   * `deadlineMs`.
   */
  writes?: { idempotency: boolean; redisPort: number | null; redisPrefix: string; deadlineMs: number };
}

/**
 * One service of the chain gateway → orders → inventory → supplier. The gateway is the shop: it
 * also holds the shared slot pool and serves the independent route.
 */
export interface TierSpec {
  role: 'tier';
  /** `gateway`, `orders` or `inventory`. */
  name: string;
  config: DrillConfig;
  /** Path this service serves for the chain (e.g. `/checkout`). */
  path: string;
  /** Name of the service it calls. */
  downstreamName: string;
  /** Base URLs of the downstream instances. */
  downstream: string[];
  /** Path it calls downstream. */
  downstreamPath: string;
  /** Whether this hop calls the external dependency (retries, budget and hedging live here). */
  edge: boolean;
  /** The naive settings (used by the naive configuration, and by prazo's warm-up before calibration). */
  naive: { timeoutMs: number; attempts: number };
  /**
   * The p99 a prazo hop assumes for its downstream until warm-up has been measured (its pre-call
   * check needs one), in ms.
   */
  startP99Ms: number;
  /** A peer configuration's edge: the settings its client gets (see `peerSettings`). */
  peer?: PeerSettings;
  /** Deadline limits of the prazo configuration, in ms: the local default and cap. */
  deadline: { defaultMs: number; maxMs: number };
  /**
   * Edge only: where the supplier instances keep the order writes' idempotency keys — `'fleet'`
   * (one Redis for the column) or `'instance'` (an in-memory store each: a write's retries must go
   * back to the instance that may have run it). The prazo order writer's `idempotencyScope`.
   */
  orderKeys?: 'fleet' | 'instance';
  /** Shop only: the shared pool and the independent route's work. */
  shop?: { pool: Required<Omit<SlotPoolOptions, 'clock'>>; catalogWorkMs: number };
}

/**
 * The users of one configuration: an open-loop load driver in its own process, so that the naive
 * configuration's connection churn (every user gives up, every socket is torn down) cannot slow the
 * measurement of the prazo one.
 */
export interface LoadSpec {
  role: 'load';
  config: DrillConfig;
  /** The shop's base URL. */
  url: string;
  rps: number;
  checkoutShare: number;
  userDeadlineMs: number;
  /** Unmeasured traffic before the measured `durationMs`, in ms: the processes warm up. */
  preMs: number;
  durationMs: number;
}

/** What a service is started with. */
export type ServiceSpec = SupplierSpec | TierSpec | LoadSpec;

/** The policy the drill hands a prazo tier once warm-up has been measured. */
export interface TierPolicy {
  /** Healthy p99 / p95 of the downstream, measured during warm-up, in ms. */
  p99Ms: number;
  p95Ms: number;
  /** Edge only: calibrated per-attempt timeouts and attempts (from `calibrateTimeout`). */
  connectMs: number;
  readMs: number;
  attempts: number;
  userDeadlineMs: number;
  /** Window of the edge's retry budget, in ms (scaled to the phases; see `budgetWindowMs`). */
  budgetWindowMs: number;
  /** What calibration had to say (attempts reduced to fit the deadline), or null. */
  warning: string | null;
}

/** What a tier measured of its downstream during warm-up. */
export interface TierMeasurement {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** A tier's counters (cumulative since start), read by the drill every sample. */
export interface TierStats {
  served: number;
  servedByStatus: Record<string, number>;
  attempts: { original: number; retry: number; hedge: number };
  attemptFailures: number;
  /** p99 of the downstream over the last few seconds, in ms (NaN when nothing finished). */
  liveP99Ms: number;
  /** The per-attempt timeout in force, in ms. */
  timeoutMs: number;
  /** Edge only: variant split of the hedging comparison. */
  byVariant: Record<string, { original: number; retry: number; hedge: number }>;
  /**
   * Edge of the naive and prazo columns: order writes sent, those answered 2xx, and the others by
   * `<status> <error code>` (null elsewhere).
   */
  writes: { sent: number; succeeded: number; failed: Record<string, number> } | null;
  pool: null | {
    size: number;
    inUse: number;
    waiting: number;
    peakInUse: number;
    rejectedQueueFull: number;
    rejectedTimeout: number;
  };
}

/** Messages from the drill to a service. */
export interface ServiceRequest {
  id: number;
  method: string;
  params?: unknown;
}

/** Messages from a service to the drill. */
export type ServiceMessage =
  | { type: 'ready'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'reply'; id: number; result?: unknown; error?: string }
  /** A load driver's finished user requests since its previous batch. */
  | { type: 'results'; results: import('./load-driver.js').UserResult[] }
  /** A load driver has sent everything and every request has ended. */
  | { type: 'load-done' };
