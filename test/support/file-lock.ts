import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A lock between test processes: a directory in the temporary folder, taken with an atomic mkdir and
 * holding its holder's pid; a lock whose holder has died is taken over. Waits at most `timeoutMs`,
 * polling every `pollMs`, then throws naming `what`.
 *
 * @returns the release.
 */
export async function acquireFileLock(
  name: string,
  { timeoutMs, pollMs, what }: { timeoutMs: number; pollMs: number; what: string },
): Promise<() => void> {
  const lock = join(tmpdir(), name);
  const holderAlive = (): boolean => {
    try {
      const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      if (!(pid > 0)) return false;
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch {
      if (!holderAlive()) {
        // Give a holder that is still writing its pid a moment before taking over.
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (!holderAlive()) rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > until) throw new Error(`another ${what} held the lock for too long`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}
