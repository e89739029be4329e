/**
 * Seeded randomness for the lab: a uniform generator and the two draws the double needs.
 *
 * The double must be reproducible (the same seed gives the same sequence of faults and latencies),
 * so it never calls `Math.random()`.
 */

/** A source of uniform numbers in `[0, 1)`. */
export type Random = () => number;

/**
 * Creates a seeded uniform generator (mulberry32: 32-bit state, period 2^32, fast and good enough
 * for fault injection — not for anything secret).
 *
 * @param seed - any number; its integer part modulo 2^32 is the state.
 * @example
 * const random = createRandom(42);
 * random(); // always the same first value for seed 42
 * @see https://gist.github.com/tommyettinger/46a874533244883189143505d203312c (mulberry32)
 */
export function createRandom(seed: number): Random {
  let state = (Number.isFinite(seed) ? Math.trunc(seed) : 0) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Draws one standard normal value (mean 0, standard deviation 1) with the Box–Muller transform.
 *
 * @see G. E. P. Box and M. E. Muller, "A Note on the Generation of Random Normal Deviates" (1958).
 */
export function standardNormal(random: Random): number {
  // 1 - u keeps the argument of the logarithm in (0, 1]: u can be 0, never 1.
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** z-score of the 99th percentile of the standard normal distribution. */
export const Z_P99 = 2.326347874040841;

/**
 * Draws from the log-normal distribution whose median is `medianMs` and whose 99th percentile is
 * `p99Ms` (so μ = ln median, σ = (ln p99 − ln median) / z₀.₉₉). Unit: milliseconds.
 *
 * @example
 * lognormalMs(createRandom(1), 50, 180); // ~half the draws below 50, ~1 % above 180
 */
export function lognormalMs(random: Random, medianMs: number, p99Ms: number): number {
  const mu = Math.log(medianMs);
  const sigma = (Math.log(p99Ms) - mu) / Z_P99;
  return Math.exp(mu + sigma * standardNormal(random));
}
