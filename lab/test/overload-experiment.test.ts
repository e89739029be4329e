import { describe, expect, it } from 'vitest';
import { untilTimersOnTime } from '../../test/support/quiet-machine.js';
import { runOverload } from '../src/overload/overload-run.js';

// The overload experiment of the drill, short: 3× the supplier's capacity, offered open loop, to the
// naive client and to prazo with its overload protections at both ends (real servers, real time:
// bounds leave room for a busy 2-core machine; the drill reports the exact figures).

/** The share of the supplier's capacity the protected setup must keep as goodput. */
const GOODPUT_FLOOR = 0.7;

describe('3× overload of a supplier of known capacity', () => {
  it('keeps most of the capacity as goodput with the protections, while the naive setup collapses', async ({
    annotate,
  }) => {
    // One more run when the protected goodput misses: a stall of the machine during the 4.5 s cuts
    // the adaptive limit, which then has no time to grow back (a CI run saw 0.36 once, five quiet
    // runs 0.94–0.97). A protection that does not work misses in both runs.
    // Each run once this process's timers run on time (the project's files import theirs at its start).
    const run = async () => {
      await untilTimersOnTime();
      return runOverload({ configs: ['naive', 'prazo-protected'], durationMs: 4_500 });
    };
    let [naive, protectedRun] = await run();
    if (protectedRun!.goodputShare < GOODPUT_FLOOR) {
      await annotate(`protected goodput ${protectedRun!.goodputShare.toFixed(2)}: measured again`, 'notice'); // listed at the run's end
      [naive, protectedRun] = await run();
    }
    expect(naive!.goodputShare).toBeLessThan(0.2);
    expect(protectedRun!.goodputShare).toBeGreaterThanOrEqual(GOODPUT_FLOOR);
    // Answers that came back in time did so within the user's deadline, by construction, and almost
    // none came back late.
    expect(protectedRun!.admittedP99Ms!).toBeLessThanOrEqual(500);
    expect(protectedRun!.lateSuccesses).toBeLessThanOrEqual(0.02 * protectedRun!.goodputRps * 3);
    // Behind the admission's in-flight limit the supplier's own queue stays short: it holds only the
    // requests whose callers left after admission (their work is still done, for nobody).
    expect(naive!.supplierPeakQueue).toBeGreaterThan(100);
    expect(protectedRun!.supplierPeakQueue).toBeLessThan(Math.min(64, naive!.supplierPeakQueue / 2));
  }, 60_000);
});
