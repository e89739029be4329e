import type { Behaviour, BehaviourInput } from '../../behaviour.js';
import { type Double, startDouble } from '../../double.js';
import type { SupplierSpec } from './spec.js';

/** The supplier's counters the drill reads (cumulative since start, across restarts). */
export interface SupplierCounts {
  received: number;
  originals: number;
  retries: number;
  hedges: number;
  /** Requests without an attempt header (also in `originals`): an HAProxy sidecar's health checks. */
  unknownKind: number;
  afterDeadline: number;
  inFlight: number;
  byStatus: Record<string, number>;
}

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
});

/** Starts one supplier instance (a double on its loopback address, port 0). */
export async function startSupplier(spec: SupplierSpec): Promise<SupplierService> {
  let double: Double = await startDouble({
    host: spec.host,
    instance: spec.instance,
    seed: spec.seed,
    behaviour: spec.behaviour,
  });
  let behaviour: Behaviour = double.behaviour();
  let carried: SupplierCounts = ZERO_SUPPLIER_COUNTS;
  let generation = 0;
  const port = double.port;

  const current = (): SupplierCounts => {
    const s = double.stats();
    const byStatus = { ...carried.byStatus };
    for (const [status, n] of Object.entries(s.byStatus)) byStatus[status] = (byStatus[status] ?? 0) + n;
    return {
      received: carried.received + s.received,
      originals: carried.originals + s.originals,
      retries: carried.retries + s.retries,
      hedges: carried.hedges + s.hedges,
      unknownKind: carried.unknownKind + s.unknownKind,
      afterDeadline: carried.afterDeadline + s.afterDeadline,
      inFlight: s.inFlight,
      byStatus,
    };
  };

  return {
    port,
    async set(input) {
      behaviour = await double.set(input);
    },
    counts: current,
    async restart() {
      carried = { ...current(), inFlight: 0 };
      await double.close();
      generation++;
      double = await startDouble({
        host: spec.host,
        port,
        instance: spec.instance,
        seed: spec.seed + 1000 * generation,
        behaviour,
      });
    },
    close: () => double.close(),
  };
}
