import { describe, expect, it } from 'vitest';
import { normalizeDrillOptions } from '../drill-options.js';
import { planPhases } from '../phase-plan.js';
import { createDrillRecorder } from './recorder.js';

describe('the drill recorder', () => {
  it('counts a checkout in its phase only when its deadline falls in it, and in the phase’s load always', () => {
    const phases = planPhases(normalizeDrillOptions({}).phases);
    const fleet = phases.find((p) => p.name === 'fleet')!;
    const recorder = createDrillRecorder(phases, 500, 2_000, ['naive', 'prazo'], 2_000);
    const user = (sentAtMs: number, ok: boolean) =>
      recorder.recordUser({
        config: 'prazo',
        route: 'checkout',
        variant: 'hedged',
        sentAtMs,
        durationMs: 100,
        ok,
        status: ok ? 200 : 0,
      });
    user(fleet.startMs + 100, true);
    user(fleet.endMs - 2_500, true);
    // Sent in the phase's last 2 s: it met the next phase's supplier and failed there.
    user(fleet.endMs - 500, false);
    expect(recorder.tally('prazo', 'fleet', 'checkout')).toMatchObject({ sent: 2, ok: 2 });
    expect(recorder.tally('prazo', 'all', 'checkout')).toMatchObject({ sent: 3, ok: 2 });
    expect(recorder.checkoutsSent('prazo', 'fleet')).toBe(3);
    expect(recorder.checkoutsSent('naive', 'fleet')).toBe(0);
  });
});
