/**
 * Peak-EWMA of an instance's latency: a moving average that jumps up at once on a slower answer and
 * comes down only as time passes, so one slow answer is remembered for about one time constant.
 *
 * Two rules, both time-weighted (the weight of the past is `exp(-Δt / decayMs)`, so a burst of fast
 * answers in one millisecond moves the average no more than one answer would):
 * - a sample above the average replaces it (the "peak");
 * - a sample below it is blended in: `average × w + sample × (1 − w)`.
 *
 * Read, the average also decays toward zero while the instance gets no answers: an instance passed
 * over because it was slow looks cheaper and cheaper until it is tried again (half the estimate
 * every `decayMs × ln 2`), instead of being starved for ever by one bad sample.
 *
 * @see Finagle `PeakEwma` (finagle-core loadbalancer) and Linkerd's balancer (tower `PeakEwma`),
 *   both with a 10 s decay.
 */

/**
 * The estimate at `nowMs`: `ewmaMs` decayed toward zero over the time since it was last updated.
 * Unit: ms. A clock that went backwards counts as no time passed.
 */
export function peakEwmaAt(ewmaMs: number, updatedAtMs: number, nowMs: number, decayMs: number): number {
  const idle = nowMs - updatedAtMs;
  return idle <= 0 ? ewmaMs : ewmaMs * Math.exp(-idle / decayMs);
}

/**
 * The average after one more sample `sampleMs` measured at `nowMs`: the sample itself when it is
 * higher, else a blend weighted by the time since the previous update. Unit: ms.
 */
export function nextPeakEwma(
  ewmaMs: number,
  updatedAtMs: number,
  sampleMs: number,
  nowMs: number,
  decayMs: number,
): number {
  if (sampleMs >= ewmaMs) return sampleMs;
  const idle = nowMs - updatedAtMs;
  const w = idle <= 0 ? 1 : Math.exp(-idle / decayMs);
  return ewmaMs * w + sampleMs * (1 - w);
}
