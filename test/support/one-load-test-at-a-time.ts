/**
 * Setup file of the `real-time` project (vitest.config.ts): a file of REAL_TIME_LOAD_FILES runs only
 * while no other one does, so that two load tests never share the machine; the project's companion
 * files (long, light, tolerant of load) run beside them (a lock between the test processes:
 * ./file-lock.ts).
 */
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { acquireFileLock } from './file-lock.js';
import { REAL_TIME_LOAD_FILES } from './real-time-files.js';

const root = join(import.meta.dirname, '..', '..');

let release: (() => void) | undefined;
// biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second, after the fixtures.
beforeAll(async ({}, suite) => {
  // At the top level of a setup file, the suite is the test file's.
  const { file, filepath } = suite as { file?: { filepath: string }; filepath?: string };
  const path = relative(root, file?.filepath ?? filepath ?? '')
    .split('\\')
    .join('/');
  if (REAL_TIME_LOAD_FILES.includes(path))
    release = await acquireFileLock(`prazo-load-test-${process.ppid}.lock`, {
      timeoutMs: 300_000,
      pollMs: 100,
      what: 'load test',
    });
}, 310_000);
afterAll(() => {
  release?.();
  release = undefined;
});
