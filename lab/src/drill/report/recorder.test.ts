import { describe, expect, it } from 'vitest';
import { normalizeDrillOptions } from '../drill-options.js';
import { planPhases } from '../phase-plan.js';
import { failureReason } from '../services/load-driver.js';
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
        reason: ok ? '' : 'gave up',
      });
    user(fleet.startMs + 100, true);
    user(fleet.endMs - 2_500, true);
    // Sent in the phase's last 2 s: it met the next phase's supplier and failed there.
    user(fleet.endMs - 500, false);
    expect(recorder.tally('prazo', 'fleet', 'checkout')).toMatchObject({ sent: 2, ok: 2 });
    expect(recorder.tally('prazo', 'all', 'checkout')).toMatchObject({ sent: 3, ok: 2 });
    expect(recorder.tally('prazo', 'all', 'checkout').failures).toEqual(new Map([['gave up', 1]]));
    expect(recorder.checkoutsSent('prazo', 'fleet')).toBe(3);
    expect(recorder.checkoutsSent('naive', 'fleet')).toBe(0);
  });
});

describe('why a user request failed', () => {
  it('names the code of the answer, a late 200, a user who gave up, a failed connection', () => {
    expect(failureReason(504, '{"error":"DEADLINE_INSUFFICIENT"}', false)).toBe('504 DEADLINE_INSUFFICIENT');
    expect(failureReason(503, '{"error":{"code":"CONCURRENCY_LIMITED"}}', false)).toBe(
      '503 CONCURRENCY_LIMITED',
    );
    expect(failureReason(502, 'not json', false)).toBe('502 error');
    expect(failureReason(200, '{}', false)).toBe('200 after the deadline');
    expect(failureReason(0, '', true)).toBe('gave up');
    expect(failureReason(0, '', false)).toBe('connection failed');
  });
});
