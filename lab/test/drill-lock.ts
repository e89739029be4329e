import { acquireFileLock } from '../../test/support/file-lock.js';

/**
 * Runs the test files that start a whole drill one at a time: two drills at once on a 2-core machine
 * (26 processes) measure the machine, not the drill. Bounded by `timeoutMs`.
 */
export function acquireDrillLock(timeoutMs = 120_000): Promise<() => void> {
  return acquireFileLock('prazo-drill-test.lock', { timeoutMs, pollMs: 250, what: 'drill test' });
}
