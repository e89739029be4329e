import type { DeadlineWaterfall, WaterfallPick } from './waterfall.js';

/** What a gateway has sampled since it was last asked. */
export interface WaterfallSamples {
  failing: DeadlineWaterfall | null;
  slow: DeadlineWaterfall | null;
  /** Failing and successful /checkouts seen since the last reset. */
  failures: number;
  successes: number;
}

/**
 * A bounded sample of the /checkouts a gateway answered: **one failing** — a reservoir of one over
 * every failing /checkout, so each is equally likely to be the one kept (a typical failure, not the
 * most extreme) — and **the slowest successful** one. It holds at most two waterfalls whatever the
 * traffic.
 *
 * Cheap on the hot path: {@link WaterfallSampler.consider} is a count, a comparison and (for a
 * failure) one random draw, with no allocation; only a /checkout that it picks is worth building a
 * waterfall for, and that happens about ln(n) times over n candidates in random order.
 *
 * @see Vitter, "Random Sampling with a Reservoir" (1985), Algorithm R with a reservoir of one.
 */
export interface WaterfallSampler {
  /**
   * Counts a /checkout that ended (`ok`: answered 200) after `elapsedMs`, and says whether it is to
   * replace a kept sample: `failing`, `slow`, or null (nothing to build).
   */
  consider(ok: boolean, elapsedMs: number): WaterfallPick | null;
  /** Keeps `waterfall` as the `pick` that {@link WaterfallSampler.consider} just returned. */
  keep(pick: WaterfallPick, waterfall: DeadlineWaterfall): void;
  /** What was sampled since the last reset. */
  peek(): WaterfallSamples;
  /** What was sampled since the last reset; then starts over (a new phase). */
  take(): WaterfallSamples;
  reset(): void;
}

/** Creates a {@link WaterfallSampler}; `random` draws the failing reservoir's replacements. */
export function createWaterfallSampler(random: () => number = Math.random): WaterfallSampler {
  let failing: DeadlineWaterfall | null = null;
  let slow: DeadlineWaterfall | null = null;
  let slowestMs = Number.NEGATIVE_INFINITY;
  let failures = 0;
  let successes = 0;
  const peek = (): WaterfallSamples => ({
    failing: failing === null ? null : { ...failing, candidates: failures },
    slow: slow === null ? null : { ...slow, candidates: successes },
    failures,
    successes,
  });
  const reset = () => {
    failing = null;
    slow = null;
    slowestMs = Number.NEGATIVE_INFINITY;
    failures = 0;
    successes = 0;
  };
  return {
    consider(ok, elapsedMs) {
      if (ok) {
        successes++;
        if (elapsedMs <= slowestMs) return null;
        slowestMs = elapsedMs;
        return 'slow';
      }
      failures++;
      // The n-th failure replaces the kept one with probability 1/n.
      return failures === 1 || random() * failures < 1 ? 'failing' : null;
    },
    keep(pick, waterfall) {
      if (pick === 'failing') failing = waterfall;
      else slow = waterfall;
    },
    peek,
    take() {
      const samples = peek();
      reset();
      return samples;
    },
    reset,
  };
}
