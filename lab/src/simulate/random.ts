import { InvalidOptionError } from 'prazo';
import { createRandom, standardNormal } from '../random.js';

/**
 * A seeded source of randomness for the simulator. Everything random in a simulation comes from one
 * of these, so the same seed replays the same incident, event for event.
 */
export interface SimRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Exponential with mean `meanMs` (inter-arrival times of a Poisson process). */
  exponential(meanMs: number): number;
  /**
   * Log-normal with the given **mean** and shape `sigma` (the σ of the underlying normal): service
   * times are right-skewed, and a mean makes utilisation arithmetic (rps × mean / servers) direct.
   */
  logNormal(meanMs: number, sigma: number): number;
  /** Pareto with minimum `scaleMs` and tail index `shape` (heavier tail as shape → 1). */
  pareto(scaleMs: number, shape: number): number;
  /**
   * An independent stream derived from this seed and `stream`, so that one consumer's draws do not
   * shift another's (every strategy then sees the same arrivals).
   */
  fork(stream: number): SimRandom;
}

/** Mixes a 32-bit integer (splitmix32 finaliser) so nearby seeds give unrelated streams. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * Creates a {@link SimRandom} from an integer seed, on the lab's seeded uniform generator
 * (mulberry32; see `createRandom` in `lab/random.ts`).
 *
 * @throws {InvalidOptionError} when `seed` is not a safe integer.
 * @example
 * const random = createSimRandom(42);
 * random.exponential(1); // ms until the next arrival at 1 000 rps
 */
export function createSimRandom(seed: number): SimRandom {
  if (!Number.isSafeInteger(seed)) throw new InvalidOptionError('seed', 'a safe integer', seed);
  return fromState(mix32(seed ^ Math.floor(seed / 0x1_0000_0000)));
}

function fromState(state: number): SimRandom {
  const next = createRandom(state);
  // (0, 1]: safe inside a logarithm.
  const open = (): number => 1 - next();
  return {
    next,
    exponential: (meanMs) => -Math.log(open()) * meanMs,
    logNormal: (meanMs, sigma) => meanMs * Math.exp(sigma * standardNormal(next) - (sigma * sigma) / 2),
    pareto: (scaleMs, shape) => scaleMs / open() ** (1 / shape),
    fork: (stream) => fromState(mix32(state ^ mix32(stream + 1))),
  };
}
