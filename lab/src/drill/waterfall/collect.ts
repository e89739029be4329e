import { createRandom } from '../../random.js';
import type { ServiceSet } from '../services/set.js';
import type { WaterfallSamples } from './sampler.js';
import { type DeadlineWaterfall, runWaterfalls, withTransit } from './waterfall.js';

/** The waterfalls the drill has gathered from its gateways, phase by phase. */
export interface WaterfallLog {
  /** Each phase's samples, tagged with the phase and the time since the traffic started. */
  byPhase: DeadlineWaterfall[];
  /** Seeds the draw of the run's failing sample among the phases' (the drill's seed). */
  seed: number;
}

/**
 * Asks each configuration's gateway for what it sampled during the phase that just ended (the
 * gateway then starts over) and adds it to `log`, tagged with the time it was received since the
 * traffic started (`trafficStartEpochMs`) and the phase of that time (`phaseAt`), with the time
 * before the gateway received it (`withTransit`; the users' deadline is `userDeadlineMs` long). A
 * gateway that does not answer is skipped.
 */
export async function collectWaterfalls(
  log: WaterfallLog,
  sets: readonly ServiceSet[],
  trafficStartEpochMs: number,
  phaseAt: (tMs: number) => string,
  userDeadlineMs: number,
): Promise<void> {
  const taken = await Promise.all(
    sets.map((set) => set.gateway.call<WaterfallSamples | null>('take-waterfalls').catch(() => null)),
  );
  for (const samples of taken) {
    if (samples === null) continue;
    for (const w of [samples.failing, samples.slow]) {
      if (w === null) continue;
      const tMs = Math.round(w.receivedAtMs - trafficStartEpochMs);
      log.byPhase.push({ ...withTransit(w, userDeadlineMs), phase: phaseAt(tMs), tMs });
    }
  }
}

/** The run's waterfalls so far from `log` (see {@link runWaterfalls}), the same draw at every call. */
export function runOf(log: WaterfallLog, configs: readonly string[]): DeadlineWaterfall[] {
  return runWaterfalls(log.byPhase, configs, createRandom(log.seed));
}
