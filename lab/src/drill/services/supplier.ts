import { createIdempotency, createRedisIdempotencyStore, type IdempotencyStats } from 'prazo/http';
import type { Behaviour, BehaviourInput } from '../../behaviour.js';
import { type Double, startDouble } from '../../double.js';
import type { DoubleStats } from '../../double-stats.js';
import { createRandom } from '../../random.js';
import { createOrderBook, createOrderWriteRoute } from './order-writes.js';
import type { SupplierSpec } from './spec.js';

/** What a supplier instance's order writes did since the previous reading. */
export interface SupplierOrders {
  /** Orders created, as `[checkout, times created]` (see `OrderBook.take`). */
  orders: Array<[string, number]>;
  /** The idempotency layer's counters since start (prazo column), or null without the layer. */
  layer: IdempotencyStats | null;
}

/**
 * The supplier's counters the drill reads (cumulative since start, across restarts): a double's own
 * counters (`unknownKind` also counts an HAProxy sidecar's health checks), and its worker queue.
 */
export type SupplierCounts = Pick<
  DoubleStats,
  'received' | 'originals' | 'retries' | 'hedges' | 'unknownKind' | 'afterDeadline' | 'inFlight' | 'byStatus'
> & {
  /** Requests waiting for a worker now (summed over instances when summed). */
  queued: number;
  /** Most requests waiting at once since the previous reading (summed over instances when summed). */
  queuePeak: number;
  /** Requests a worker finished after their caller had gone: work for nobody. */
  servedForNobody: number;
};

/** One supplier instance: a dependency double the drill can switch, read and restart. */
export interface SupplierService {
  readonly port: number;
  set(behaviour: BehaviourInput): Promise<void>;
  counts(): SupplierCounts;
  /**
   * Restarts the double on the same port: every connection it holds (hung requests included) is
   * reset, as when a stuck dependency is restarted. Counters carry on.
   */
  restart(): Promise<void>;
  /** The orders created since the previous call (see {@link SupplierOrders}). */
  takeOrders(): SupplierOrders;
  close(): Promise<void>;
}

/** Counters of a supplier that has received nothing. */
export const ZERO_SUPPLIER_COUNTS: SupplierCounts = Object.freeze({
  received: 0,
  originals: 0,
  retries: 0,
  hedges: 0,
  unknownKind: 0,
  afterDeadline: 0,
  inFlight: 0,
  byStatus: {},
  queued: 0,
  queuePeak: 0,
  servedForNobody: 0,
});

/** Starts one supplier instance (a double on its loopback address, port 0). */
export async function startSupplier(spec: SupplierSpec): Promise<SupplierService> {
  // The order writes live beside the double, so a restart keeps the orders (a database would).
  const book = createOrderBook();
  const layer = await writeLayer(spec);
  const writes = createOrderWriteRoute({
    behaviour: () => behaviour,
    random: createRandom(spec.seed + 7_919),
    book,
    ...(layer ? { idempotency: layer.idempotency, deadlineMs: spec.writes!.deadlineMs } : {}),
  });
  let double: Double = await startDouble({
    host: spec.host,
    instance: spec.instance,
    seed: spec.seed,
    behaviour: spec.behaviour,
    workers: spec.workers,
    route: writes.route,
  });
  let behaviour: Behaviour = double.behaviour();
  let carried: SupplierCounts = ZERO_SUPPLIER_COUNTS;
  let generation = 0;
  const port = double.port;

  // In flight and the queue are the live double's alone; the rest carries on across restarts.
  const current = (): SupplierCounts => {
    const queue = double.queue();
    const live: SupplierCounts = {
      ...double.stats(),
      queued: queue?.waiting ?? 0,
      queuePeak: queue?.peakWaiting ?? 0,
      servedForNobody: queue?.servedForNobody ?? 0,
    };
    return {
      ...sumSuppliers([carried, live]),
      inFlight: live.inFlight,
      queued: live.queued,
      queuePeak: live.queuePeak,
    };
  };

  return {
    port,
    async set(input) {
      behaviour = await double.set(input);
    },
    counts: current,
    async restart() {
      carried = { ...current(), inFlight: 0, queued: 0, queuePeak: 0 };
      await double.close();
      generation++;
      double = await startDouble({
        host: spec.host,
        port,
        instance: spec.instance,
        seed: spec.seed + 1000 * generation,
        behaviour,
        workers: spec.workers,
        route: writes.route,
      });
    },
    takeOrders: () => ({ orders: book.take(), layer: layer?.idempotency.stats() ?? null }),
    async close() {
      writes.close();
      await double.close();
      layer?.close();
    },
  };
}

/**
 * The prazo column's idempotency layer for the order writes: one store for the column's fleet, so
 * that a retry or a hedge that lands on another instance finds the key. Redis when the drill started
 * one (`redisPort`); otherwise an in-memory store of this instance alone, which does not deduplicate
 * across instances (the report says which ran).
 */
async function writeLayer(spec: SupplierSpec) {
  const writes = spec.writes;
  if (!writes?.idempotency) return null;
  if (writes.redisPort === null) return { idempotency: createIdempotency(), close() {} };
  const { Redis } = await import('ioredis');
  const client = new Redis({
    host: '127.0.0.1',
    port: writes.redisPort,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
  });
  client.on('error', () => {});
  await client.connect();
  const store = createRedisIdempotencyStore({ client, prefix: writes.redisPrefix });
  return { idempotency: createIdempotency({ store }), close: () => client.disconnect() };
}

/** Sums the counters of supplier instances. */
export function sumSuppliers(counts: readonly SupplierCounts[]): SupplierCounts {
  const total: SupplierCounts = { ...ZERO_SUPPLIER_COUNTS, byStatus: {} };
  for (const c of counts) {
    total.received += c.received;
    total.originals += c.originals;
    total.retries += c.retries;
    total.hedges += c.hedges;
    total.unknownKind += c.unknownKind;
    total.afterDeadline += c.afterDeadline;
    total.inFlight += c.inFlight;
    total.queued += c.queued;
    total.queuePeak += c.queuePeak;
    total.servedForNobody += c.servedForNobody;
    for (const [s, n] of Object.entries(c.byStatus)) total.byStatus[s] = (total.byStatus[s] ?? 0) + n;
  }
  return total;
}
