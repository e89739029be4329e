import type { Simulation } from './engine.js';
import type { SimRandom } from './random.js';

/** Shape of the simulated dependency: `servers` workers in front of one FIFO queue. */
export interface ServerModelOptions {
  /** Workers serving requests in parallel (threads, pods × concurrency). */
  servers: number;
  /** Mean service time of one request on an idle worker, ms (log-normal). */
  serviceMeanMs: number;
  /** Shape σ of the log-normal service time (0.5: p99 ≈ 2.8 × mean). */
  serviceSigma: number;
  /** Requests that may wait for a worker; one more is refused at once with a 503. */
  queueLimit: number;
  /** Time to send back a refusal (the 503 of a full queue), ms. */
  rejectMs: number;
  /**
   * Whether a request the client stopped waiting for is dropped from the queue. `false` (the common
   * case: HTTP servers do not notice a client timeout) is what makes metastable failure possible —
   * the dependency keeps spending capacity on answers nobody reads.
   */
  cancelAbandoned: boolean;
}

/** How an attempt left the dependency. */
export type JobStatus = 200 | 500 | 503;

/** One request inside the dependency. */
export interface SimJob {
  readonly arrivalMs: number;
  /** The client gave up on it (a timeout); it may still occupy a worker. */
  abandoned: boolean;
}

/** What the dependency has done so far. */
export interface ServerStats {
  /** Attempts that reached the dependency. */
  arrived: number;
  /** Refused with a 503 because the queue was full. */
  rejected: number;
  /** Served by a worker (whatever the status, whether or not anyone still waited). */
  served: number;
  /** Served while the client had already given up: capacity spent for nobody. */
  servedAbandoned: number;
  /** Dropped from the queue after the client gave up (only with `cancelAbandoned`). */
  dropped: number;
}

/**
 * A dependency with finite capacity: an M/G/c queue with a queue limit. Latency grows with the queue,
 * a full queue refuses with 503, and (unless `cancelAbandoned`) requests the client abandoned still
 * occupy workers.
 */
export interface ServerModel {
  /**
   * Hands one attempt to the dependency. `respond(status, latencyMs)` is called once, later in
   * virtual time, when the dependency answers — also when the client has abandoned the job.
   */
  submit(respond: (status: JobStatus, latencyMs: number) => void): SimJob;
  /** The client stopped waiting for `job`. */
  abandon(job: SimJob): void;
  /** Multiplies the number of workers (a capacity drop: 0.5 = half the workers are gone). */
  setCapacityFactor(factor: number): void;
  /** Share of served requests that fail with a 500 (an error burst). */
  setErrorRate(rate: number): void;
  /** Requests waiting for a worker now. */
  queueLength(): number;
  /** Workers busy now. */
  busy(): number;
  /** Requests queued or being served. */
  inSystem(): number;
  readonly stats: Readonly<ServerStats>;
}

interface QueuedJob extends SimJob {
  respond: (status: JobStatus, latencyMs: number) => void;
  queued: boolean;
}

/**
 * Creates a {@link ServerModel} on `sim`, drawing service times and errors from `random`.
 * @example
 * const dependency = createServerModel(sim, random.fork(1), { servers: 35, serviceMeanMs: 28, serviceSigma: 0.5, queueLimit: 1000, rejectMs: 1, cancelAbandoned: false });
 */
export function createServerModel(
  sim: Simulation,
  random: SimRandom,
  options: ServerModelOptions,
): ServerModel {
  const { servers, serviceMeanMs, serviceSigma, queueLimit, rejectMs, cancelAbandoned } = options;
  let capacity = servers;
  let errorRate = 0;
  let busy = 0;
  // FIFO without Array#shift: a head index, compacted now and then.
  let queue: QueuedJob[] = [];
  let head = 0;
  let queued = 0;
  const stats: ServerStats = { arrived: 0, rejected: 0, served: 0, servedAbandoned: 0, dropped: 0 };

  const start = (job: QueuedJob): void => {
    busy++;
    const serviceMs = random.logNormal(serviceMeanMs, serviceSigma);
    sim.after(serviceMs, () => {
      busy--;
      stats.served++;
      if (job.abandoned) stats.servedAbandoned++;
      const status: JobStatus = errorRate > 0 && random.next() < errorRate ? 500 : 200;
      job.respond(status, sim.now() - job.arrivalMs);
      pump();
    });
  };

  const pump = (): void => {
    while (busy < capacity && queued > 0) {
      const job = queue[head++]!;
      if (!job.queued) continue; // dropped after its client gave up
      job.queued = false;
      queued--;
      start(job);
    }
    if (head > 4096 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  };

  return {
    submit(respond) {
      stats.arrived++;
      const job: QueuedJob = { arrivalMs: sim.now(), abandoned: false, respond, queued: false };
      if (busy < capacity && queued === 0) start(job);
      else if (queued < queueLimit) {
        job.queued = true;
        queued++;
        queue.push(job);
      } else {
        stats.rejected++;
        sim.after(rejectMs, () => respond(503, rejectMs));
      }
      return job;
    },
    abandon(job) {
      const j = job as QueuedJob;
      j.abandoned = true;
      if (cancelAbandoned && j.queued) {
        j.queued = false;
        queued--;
        stats.dropped++;
      }
    },
    setCapacityFactor(factor) {
      capacity = Math.max(0, Math.round(servers * factor));
      pump();
    },
    setErrorRate(rate) {
      errorRate = rate;
    },
    queueLength: () => queued,
    busy: () => busy,
    inSystem: () => queued + busy,
    stats,
  };
}
