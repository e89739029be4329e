/**
 * An instance's latency floor: what its quickest recent answers took, which is what it costs to
 * reach it and be served with nothing ahead — a farther network path, a slower machine — apart
 * from any queue. The fleet's lowest floor is the nearest instance's; what another instance's floor
 * is above it is its **distance** (`Balancer.distanceMs`), the part of its latency that load does
 * not explain.
 *
 * The floor is the lowest of the instance's last {@link FLOOR_SAMPLES} successful answers: for the
 * log-normal latencies of docs/instances.md (p99 = 4.5 × the median) that is near the 8th
 * percentile whatever the instance's share of the calls, and a path that got longer shows in full
 * after that many answers — a few hundred milliseconds at the rates a concurrency limit acts on,
 * within the few windows in which it would otherwise read the new distance as a queue.
 */

/** Successful answers an instance's floor is the lowest of. */
export const FLOOR_SAMPLES = 8;

/**
 * How many times the lowest floor of the fleet an instance's floor must be before its distance
 * counts (below it, `Balancer.distanceMs` is 0). The lowest of eight answers is a noisy figure: for
 * the log-normal latencies above it lies between 0.24 and 0.64 of the median in eight cases of ten,
 * so two instances equally near differ by up to 2.7 times, and the lowest of three by more. A
 * distance read from that noise would lower the latency a concurrency limit samples by a tenth
 * where it tolerates a twentieth.
 */
export const FAR_FACTOR = 3;

/**
 * Records `sampleMs` in the ring of instance `slot` (`FLOOR_SAMPLES` cells from `slot ×
 * FLOOR_SAMPLES` in `ring`; `count[slot]` answers so far) and returns the instance's floor now.
 *
 * @example
 * const ring = new Float64Array(FLOOR_SAMPLES);
 * const count = new Int32Array(1);
 * recordFloor(ring, count, 0, 30); // 30
 * recordFloor(ring, count, 0, 20); // 20
 * recordFloor(ring, count, 0, 90); // 20
 */
export function recordFloor(ring: Float64Array, count: Int32Array, slot: number, sampleMs: number): number {
  const base = slot * FLOOR_SAMPLES;
  const n = count[slot]!;
  ring[base + (n % FLOOR_SAMPLES)] = sampleMs;
  count[slot] = n + 1 >= 2 * FLOOR_SAMPLES ? FLOOR_SAMPLES + ((n + 1) % FLOOR_SAMPLES) : n + 1;
  const kept = Math.min(n + 1, FLOOR_SAMPLES);
  let floor = ring[base]!;
  for (let k = 1; k < kept; k++) if (ring[base + k]! < floor) floor = ring[base + k]!;
  return floor;
}
