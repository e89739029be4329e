/**
 * Setup file of the `real-time` project (vitest.config.ts): a file of REAL_TIME_LOAD_FILES runs only
 * while no other one does, so that two load tests never share the machine; the project's companion
 * files (long, light, tolerant of load) run beside them. A lock directory in the temporary folder,
 * taken with an atomic mkdir; a lock whose holder has died is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { REAL_TIME_LOAD_FILES } from './real-time-files.js';

const LOCK = join(tmpdir(), `prazo-load-test-${process.ppid}.lock`);
const root = join(import.meta.dirname, '..', '..');

const holderAlive = (): boolean => {
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return pid > 0;
  } catch {
    return false;
  }
};

async function acquire(timeoutMs: number): Promise<() => void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      if (!holderAlive()) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (!holderAlive()) rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > until) throw new Error('another load test held the lock for too long');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

let release: (() => void) | undefined;
// biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second, after the fixtures.
beforeAll(async ({}, suite) => {
  // At the top level of a setup file, the suite is the test file's.
  const { file, filepath } = suite as { file?: { filepath: string }; filepath?: string };
  const path = relative(root, file?.filepath ?? filepath ?? '')
    .split('\\')
    .join('/');
  if (REAL_TIME_LOAD_FILES.includes(path)) release = await acquire(300_000);
}, 310_000);
afterAll(() => {
  release?.();
  release = undefined;
});
