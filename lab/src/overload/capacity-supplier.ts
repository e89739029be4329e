import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Admission } from 'prazo/http';
import { withDeadlineHandler } from 'prazo/http';
import { createServer } from '../http-module.js';
import { createWorkerQueue } from '../worker-queue.js';

/** How the supplier of the overload experiment is built. */
export interface CapacitySupplierOptions {
  /** Requests worked on at once (its workers: threads, database connections …). */
  workers: number;
  /** Time one request holds a worker, ms. Capacity = workers × 1000 / serviceMs requests per second. */
  serviceMs: number;
  /**
   * How requests reach the workers:
   * - `'plain'`: a bare `node:http` handler, deadline-blind;
   * - `'deadline'`: prazo/http without admission (504 when a request arrives expired or outlives
   *   its deadline; the work it queued is still done);
   * - an `Admission`: prazo/http with it (refusal on arrival, in-flight limit, CoDel queue).
   */
  front: 'plain' | 'deadline' | Admission;
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
}

/** What the supplier counted. */
export interface CapacitySupplierStats {
  /** Requests that reached the handler. */
  received: number;
  /** Requests a worker finished. */
  served: number;
  /** Of those, finished after the caller had gone (it closed the connection or prazo answered 504). */
  servedForNobody: number;
  /** Most requests waiting for a worker at once. */
  peakQueue: number;
}

/** A supplier of known capacity, listening. */
export interface CapacitySupplier {
  readonly origin: string;
  /** Requests per second it can serve (with the workers and service time it started with). */
  readonly capacityRps: number;
  /**
   * Changes its capacity from now on: requests that start work after the call take `serviceMs`, and
   * at most `workers` work at once (a lost worker finishes what it holds). The trigger of a transient.
   */
  setCapacity(workers: number, serviceMs: number): void;
  /** Requests waiting for a worker now. */
  queued(): number;
  stats(): CapacitySupplierStats;
  close(): Promise<void>;
}

/**
 * A dependency of fixed capacity: `workers` workers, each holding a request for `serviceMs`, and an
 * internal FIFO queue in front of them that knows nothing of deadlines — the queue a thread pool or a
 * connection pool forms inside a real service. Under more load than it can serve the queue grows
 * without bound, every request waits longer, and past some point none is answered in time although
 * every worker is busy: the collapse of goodput the overload experiment shows.
 */
export async function startCapacitySupplier(options: CapacitySupplierOptions): Promise<CapacitySupplier> {
  const { front } = options;
  let serviceMs = options.serviceMs;
  const stats: CapacitySupplierStats = { received: 0, served: 0, servedForNobody: 0, peakQueue: 0 };
  const queue = createWorkerQueue(options.workers);
  const handle = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    stats.received++;
    queue.submit((done) => {
      setTimeout(() => {
        stats.served++;
        if (res.destroyed || res.writableEnded) stats.servedForNobody++;
        else res.end('{"ok":true}');
        done();
      }, serviceMs);
    });
    stats.peakQueue = queue.stats().peakWaiting;
  };
  const listener =
    front === 'plain'
      ? handle
      : withDeadlineHandler(handle, {
          defaultMs: 10_000,
          maxMs: 60_000,
          // Its callers are the lab's own clients: their deadlines and criticality count.
          trust: 'all',
          ...(front === 'deadline' ? {} : { admission: front }),
        });
  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    void listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    origin: `http://${address}:${port}`,
    capacityRps: (options.workers * 1000) / options.serviceMs,
    setCapacity(nextWorkers, nextServiceMs) {
      serviceMs = nextServiceMs;
      queue.setWorkers(nextWorkers);
    },
    queued: () => queue.stats().waiting,
    stats: () => ({ ...stats }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
