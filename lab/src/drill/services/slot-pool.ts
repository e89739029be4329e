import { type Clock, InvalidOptionError, systemClock, type Timer } from 'prazo';

/** Options of {@link createSlotPool}: a fixed-size resource shaped like a database connection pool. */
export interface SlotPoolOptions {
  /** Slots, each held for a request's whole duration. @default 50 */
  size?: number;
  /** Most requests waiting for a slot; beyond it a request is rejected at once. @default 100 */
  maxWaiting?: number;
  /** Longest wait for a slot before the request is rejected, in ms. @default 1000 */
  acquireTimeoutMs?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link SlotPoolOptions}. */
export const SLOT_POOL_DEFAULTS = Object.freeze({ size: 50, maxWaiting: 100, acquireTimeoutMs: 1000 });

/** Why a slot could not be had. */
export type AcquireFailure = 'queue-full' | 'acquire-timeout' | 'cancelled';

/** What a pool has done since it started (a JSON-able snapshot). */
export interface SlotPoolStats {
  size: number;
  inUse: number;
  waiting: number;
  /** Highest `inUse` since the last {@link SlotPool.takePeak}. */
  peakInUse: number;
  acquired: number;
  rejectedQueueFull: number;
  rejectedTimeout: number;
}

/** A held slot: release it exactly once (extra calls are ignored). */
export type Release = () => void;

/** A fixed number of slots with a bounded wait queue and an acquire timeout. */
export interface SlotPool {
  /**
   * Takes a slot, waiting in line when none is free.
   * Resolves to a release function, or to the reason the slot was refused.
   */
  acquire(signal?: AbortSignal): Promise<Release | AcquireFailure>;
  stats(): SlotPoolStats;
  /** Returns the peak occupancy since the previous call and starts a new peak from the current level. */
  takePeak(): number;
}

interface Waiter {
  resolve: (value: Release | AcquireFailure) => void;
  timer: Timer;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * Creates the drill's shared resource: `size` slots held for each request's whole duration, like the
 * article's 50-connection pool. By Little's law a pool of 50 at 100 rps holds up only while requests
 * take under 500 ms on average; a dependency slowed to the timeout exhausts it, and then every route
 * that needs a slot fails — including those that never call the dependency.
 *
 * @throws InvalidOptionError naming the option.
 */
export function createSlotPool(options: SlotPoolOptions = {}): SlotPool {
  const size = options.size ?? SLOT_POOL_DEFAULTS.size;
  const maxWaiting = options.maxWaiting ?? SLOT_POOL_DEFAULTS.maxWaiting;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? SLOT_POOL_DEFAULTS.acquireTimeoutMs;
  const clock = options.clock ?? systemClock;
  if (!Number.isInteger(size) || size < 1) throw new InvalidOptionError('pool', 'an integer ≥ 1', size);
  if (!Number.isInteger(maxWaiting) || maxWaiting < 0)
    throw new InvalidOptionError('maxWaiting', 'an integer ≥ 0', maxWaiting);
  if (!(acquireTimeoutMs >= 0) || !Number.isFinite(acquireTimeoutMs))
    throw new InvalidOptionError('acquireTimeoutMs', 'a finite number of ms ≥ 0', acquireTimeoutMs);

  let inUse = 0;
  let peak = 0;
  let acquired = 0;
  let rejectedQueueFull = 0;
  let rejectedTimeout = 0;
  const queue: Waiter[] = [];

  const take = (): Release => {
    inUse++;
    acquired++;
    if (inUse > peak) peak = inUse;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inUse--;
      handOver();
    };
  };

  const settle = (waiter: Waiter, value: Release | AcquireFailure): void => {
    clock.clearTimeout(waiter.timer);
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(value);
  };

  function handOver(): void {
    while (inUse < size && queue.length > 0) {
      const waiter = queue.shift()!;
      settle(waiter, take());
    }
  }

  const remove = (waiter: Waiter): boolean => {
    const index = queue.indexOf(waiter);
    if (index < 0) return false;
    queue.splice(index, 1);
    return true;
  };

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.resolve('cancelled');
      if (inUse < size && queue.length === 0) return Promise.resolve(take());
      if (queue.length >= maxWaiting) {
        rejectedQueueFull++;
        return Promise.resolve('queue-full');
      }
      return new Promise((resolve) => {
        const waiter: Waiter = {
          resolve,
          signal,
          onAbort: undefined,
          timer: clock.setTimeout(() => {
            if (!remove(waiter)) return;
            rejectedTimeout++;
            settle(waiter, 'acquire-timeout');
          }, acquireTimeoutMs),
        };
        if (signal) {
          waiter.onAbort = () => {
            if (remove(waiter)) settle(waiter, 'cancelled');
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
      });
    },
    stats: () => ({
      size,
      inUse,
      waiting: queue.length,
      peakInUse: peak,
      acquired,
      rejectedQueueFull,
      rejectedTimeout,
    }),
    takePeak() {
      const value = peak;
      peak = inUse;
      return value;
    },
  };
}
