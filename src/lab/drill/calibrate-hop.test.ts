import { describe, expect, it } from 'vitest';
import { calibrateHop, WRITE_CALIBRATION } from './calibrate-hop.js';
import { normalizeDrillOptions } from './drill-options.js';

const measured = { count: 500, p50Ms: 60, p95Ms: 200, p99Ms: 300 };
const options = normalizeDrillOptions({ quick: true });

describe('the policy of a prazo hop', () => {
  it('gives the edge and the order write the retries that fit the deadline, the internal hop one attempt', () => {
    expect(calibrateHop(measured, options, 'edge').attempts).toBe(options.prazoAttempts);
    expect(calibrateHop(measured, options, 'write').attempts).toBe(options.prazoAttempts);
    expect(calibrateHop(measured, options, 'internal').attempts).toBe(1);
  });

  it("puts the order write's read timeout at the p99 × 2.5, the edge's at × 1.4", () => {
    expect(WRITE_CALIBRATION.slack).toBe(2.5);
    expect(calibrateHop(measured, options, 'edge').readMs).toBe(420);
    expect(calibrateHop(measured, options, 'write').readMs).toBe(750);
    // Two write attempts still fit the gateway's deadline.
    const write = calibrateHop(measured, options, 'write');
    expect(write.readMs * write.attempts).toBeLessThan(options.gatewayDeadlineMs);
    expect(write.warning).toBeNull();
  });
});
