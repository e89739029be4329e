import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK = join(tmpdir(), 'prazo-drill-test.lock');

const holderAlive = (): boolean => {
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    if (!(pid > 0)) return false;
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Runs the test files that start a whole drill one at a time: two drills at once on a 2-core machine
 * (26 processes) measure the machine, not the drill. A lock directory in the temporary folder, taken
 * with an atomic mkdir; a lock whose holder has died is taken over. Bounded by `timeoutMs`.
 */
export async function acquireDrillLock(timeoutMs = 120_000): Promise<() => void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      if (!holderAlive()) {
        // Give a holder that is still writing its pid a moment before taking over.
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (!holderAlive()) rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > until) throw new Error('another drill test held the lock for too long');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
