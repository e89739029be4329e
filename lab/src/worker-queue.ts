/** What a {@link WorkerQueue} holds now and has held. */
export interface WorkerQueueStats {
  /** Workers (the most requests worked on at once). */
  workers: number;
  /** Workers busy now. */
  busy: number;
  /** Requests waiting for a worker now. */
  waiting: number;
  /** Most requests waiting at once since the queue was created. */
  peakWaiting: number;
  /** Jobs a worker finished. */
  finished: number;
}

/** A job: started when a worker is free, it calls `done()` once, when its work is over. */
export type WorkerJob = (done: () => void) => void;

/**
 * The inside of a service of finite capacity: `workers` workers and an unbounded FIFO queue in front of
 * them that knows nothing of deadlines or of callers who left — what a thread pool, a connection pool
 * or a busy event loop does. Each job holds a worker until it calls `done()`.
 */
export interface WorkerQueue {
  /** Starts `job` at once when a worker is free, else queues it behind the others. */
  submit(job: WorkerJob): void;
  stats(): WorkerQueueStats;
  /** The most requests that waited at once since the previous call (or the start), then starts over. */
  takePeakWaiting(): number;
  /** Drops every job still waiting (a restart); the busy ones finish as they will. */
  clear(): void;
  /**
   * Changes the number of workers from now on: more start waiting jobs at once; with fewer, the
   * busy ones finish what they hold and no new job starts until the busy count is below the new one.
   */
  setWorkers(workers: number): void;
}

/**
 * Creates a {@link WorkerQueue}. Pure bookkeeping: no timers, no sockets — the jobs do the waiting.
 *
 * @throws RangeError when `workers` is not a positive integer.
 * @example
 * const queue = createWorkerQueue(2);
 * queue.submit((done) => setTimeout(done, 50)); // one worker busy for 50 ms
 */
export function createWorkerQueue(initialWorkers: number): WorkerQueue {
  checkWorkers(initialWorkers);
  let workers = initialWorkers;
  const waiting: WorkerJob[] = [];
  let busy = 0;
  let peakWaiting = 0;
  let peakSinceTake = 0;
  let finished = 0;
  const start = (job: WorkerJob): void => {
    busy++;
    let released = false;
    job(() => {
      if (released) return;
      released = true;
      busy--;
      finished++;
      startWaiting();
    });
  };
  const startWaiting = (): void => {
    while (busy < workers) {
      const next = waiting.shift();
      if (next === undefined) return;
      start(next);
    }
  };
  return {
    submit(job) {
      if (busy < workers) {
        start(job);
        return;
      }
      waiting.push(job);
      if (waiting.length > peakWaiting) peakWaiting = waiting.length;
      if (waiting.length > peakSinceTake) peakSinceTake = waiting.length;
    },
    stats: () => ({ workers, busy, waiting: waiting.length, peakWaiting, finished }),
    takePeakWaiting() {
      const peak = Math.max(peakSinceTake, waiting.length);
      peakSinceTake = waiting.length;
      return peak;
    },
    clear() {
      waiting.length = 0;
    },
    setWorkers(next) {
      checkWorkers(next);
      workers = next;
      startWaiting();
    },
  };
}

function checkWorkers(workers: number): void {
  if (!Number.isInteger(workers) || workers < 1)
    throw new RangeError(`workers must be a positive integer, got ${workers}`);
}
