import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, sampleLatencyMs } from './latency-distribution.js';
import { createRandom } from './random.js';

describe('sampleLatencyMs', () => {
  it('returns the fixed delay', () => {
    expect(sampleLatencyMs({ type: 'fixed', ms: 250 }, createRandom(1))).toBe(250);
  });

  it('takes about tailShare of its draws from the tail of a mixture', () => {
    const random = createRandom(5);
    const mixture = {
      type: 'mixture' as const,
      base: { type: 'fixed' as const, ms: 5 },
      tail: { type: 'fixed' as const, ms: 400 },
      tailShare: 0.05,
    };
    let slow = 0;
    for (let i = 0; i < 20_000; i++) if (sampleLatencyMs(mixture, random) === 400) slow++;
    expect(slow / 20_000).toBeGreaterThan(0.045);
    expect(slow / 20_000).toBeLessThan(0.055);
  });

  it('clamps a log-normal draw to the largest delay a timer can hold', () => {
    const wide = { type: 'lognormal' as const, medianMs: MAX_DELAY_MS, p99Ms: MAX_DELAY_MS * 1000 };
    const random = createRandom(2);
    for (let i = 0; i < 100; i++) expect(sampleLatencyMs(wide, random)).toBeLessThanOrEqual(MAX_DELAY_MS);
  });
});
