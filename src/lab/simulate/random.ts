import { InvalidOptionError } from '../../errors.js';

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
  /** An independent stream derived from this seed and `stream`, so that one consumer's draws do
   * not shift another's (every strategy then sees the same arrivals). */
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
 * Creates a {@link SimRandom} from an integer seed: mulberry32, a 32-bit generator with a period of
 * 2^32 and good statistical quality for simulation (not for cryptography).
 *
 * @throws {InvalidOptionError} when `seed` is not a safe integer.
 * @example
 * const random = createRandom(42);
 * random.exponential(1); // ms until the next arrival at 1 000 rps
 * @see Tommy Ettinger, mulberry32 (public domain).
 */
export function createRandom(seed: number): SimRandom {
  if (!Number.isSafeInteger(seed)) throw new InvalidOptionError('seed', 'a safe integer', seed);
  return fromState(mix32(seed ^ Math.floor(seed / 0x1_0000_0000)));
}

function fromState(initial: number): SimRandom {
  let state = initial | 0;
  // Box–Muller yields normals in pairs; keep the spare one.
  let spare = Number.NaN;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  // (0, 1]: safe inside a logarithm.
  const open = (): number => 1 - next();
  const normal = (): number => {
    if (!Number.isNaN(spare)) {
      const value = spare;
      spare = Number.NaN;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(open()));
    const angle = 2 * Math.PI * next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
  return {
    next,
    exponential: (meanMs) => -Math.log(open()) * meanMs,
    logNormal: (meanMs, sigma) => meanMs * Math.exp(sigma * normal() - (sigma * sigma) / 2),
    pareto: (scaleMs, shape) => scaleMs / open() ** (1 / shape),
    fork: (stream) => fromState(mix32(initial ^ mix32(stream + 1))),
  };
}
