import { InvalidOptionError } from 'prazo';
import type { Behaviour, BehaviourInput } from './behaviour.js';
import { type Double, type DoubleOptions, startDouble } from './double.js';
import type { DoubleStats } from './double-stats.js';

/** Options of {@link startDoubles}: those of a double, with a behaviour per instance. */
export interface DoubleGroupOptions extends Omit<DoubleOptions, 'behaviour' | 'instance'> {
  /**
   * Behaviour of each instance: one for all, or a function of the instance index (0-based) —
   * e.g. `(i) => i === 0 ? slowOnFivePercent : undefined` for "one slow instance".
   * With a fixed `port` (or `adminPort`) other than 0, instance `i` listens on `port + i`.
   * Instance `i` is seeded with `seed + i`.
   */
  behaviour?: BehaviourInput | Behaviour | ((instance: number) => BehaviourInput | Behaviour | undefined);
}

/** Several doubles standing for the instances of one dependency. */
export interface DoubleGroup {
  readonly instances: readonly Double[];
  /** `instances[i].url`, in order. */
  readonly urls: readonly string[];
  /** Stats of each instance, in order. */
  stats(): DoubleStats[];
  /** Zeroes every instance's counters. */
  reset(): void;
  /** Closes every instance. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Most instances a group may have. */
export const MAX_INSTANCES = 64;

/**
 * Starts `count` doubles (instances of one dependency), each with its own port, counters, seed and
 * behaviour — what hedging needs: one slow instance among healthy ones.
 *
 * @throws InvalidOptionError when `count` is not an integer in [1, 64], or for a bad option.
 * @example
 * await using group = await startDoubles(3, {
 *   behaviour: (i) => (i === 0 ? { latency: { type: 'mixture', base: { type: 'fixed', ms: 5 },
 *     tail: { type: 'fixed', ms: 400 }, tailShare: 0.05 } } : undefined),
 * });
 */
export async function startDoubles(count: number, options: DoubleGroupOptions = {}): Promise<DoubleGroup> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_INSTANCES) {
    throw new InvalidOptionError('instances', `an integer in [1, ${MAX_INSTANCES}]`, count);
  }
  const { behaviour, port, adminPort, seed, ...rest } = options;
  const instances: Double[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const chosen = typeof behaviour === 'function' ? behaviour(i) : behaviour;
      const instanceOptions: DoubleOptions = { ...rest, instance: i, seed: (seed ?? 1) + i };
      if (chosen !== undefined) instanceOptions.behaviour = chosen;
      if (port !== undefined) instanceOptions.port = port === 0 ? 0 : port + i;
      if (adminPort !== undefined)
        instanceOptions.adminPort = adminPort === null || adminPort === 0 ? adminPort : adminPort + i;
      instances.push(await startDouble(instanceOptions));
    }
  } catch (error) {
    await Promise.all(instances.map((double) => double.close()));
    throw error;
  }
  const close = async () => {
    await Promise.all(instances.map((double) => double.close()));
  };
  return {
    instances,
    urls: instances.map((double) => double.url),
    stats: () => instances.map((double) => double.stats()),
    reset: () => {
      for (const double of instances) double.reset();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
