/**
 * Setup file of the `real-time` project (vitest.config.ts): a file of a lane of REAL_TIME_LANES runs
 * only while no other file of that lane does, so that two busy load tests never share the machine,
 * nor two light ones; a busy one and a light one run side by side, and the project's companion files
 * (long, light, tolerant of load) beside them (a lock per lane between the test processes:
 * ./file-lock.ts).
 */
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { acquireFileLock } from './file-lock.js';
import { REAL_TIME_LANES } from './real-time-files.js';

const root = join(import.meta.dirname, '..', '..');

let release: (() => void) | undefined;
// biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second, after the fixtures.
beforeAll(async ({}, suite) => {
  // At the top level of a setup file, the suite is the test file's.
  const { file, filepath } = suite as { file?: { filepath: string }; filepath?: string };
  const path = relative(root, file?.filepath ?? filepath ?? '')
    .split('\\')
    .join('/');
  const lane = (Object.keys(REAL_TIME_LANES) as Array<keyof typeof REAL_TIME_LANES>).find((name) =>
    REAL_TIME_LANES[name].includes(path),
  );
  if (lane !== undefined)
    release = await acquireFileLock(`prazo-load-test-${lane}-${process.ppid}.lock`, {
      timeoutMs: 300_000,
      pollMs: 100,
      what: `${lane} load test`,
    });
}, 310_000);
afterAll(() => {
  release?.();
  release = undefined;
});
