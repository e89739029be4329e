/**
 * Setup file of the `real-time` project (vitest.config.ts): a file of a lane of REAL_TIME_LANES runs
 * only while no other file of that lane does, and a file of REAL_TIME_ALONE only while no load test
 * does; the two lanes run side by side, and the project's companion files (long, light, tolerant of
 * load) beside them (a lock per lane between the test processes: ./file-lock.ts). A file of ALONE
 * takes both at once: it waits for one, and gives it back at once if the other is taken, so that it
 * never holds a lane idle while it waits for the other.
 */
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { acquireFileLock } from './file-lock.js';
import { REAL_TIME_ALONE, REAL_TIME_LANES } from './real-time-files.js';

const root = join(import.meta.dirname, '..', '..');
const lanes = Object.keys(REAL_TIME_LANES) as Array<keyof typeof REAL_TIME_LANES>;

let releases: Array<() => void> = [];
// biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second, after the fixtures.
beforeAll(async ({}, suite) => {
  // At the top level of a setup file, the suite is the test file's.
  const { file, filepath } = suite as { file?: { filepath: string }; filepath?: string };
  const path = relative(root, file?.filepath ?? filepath ?? '')
    .split('\\')
    .join('/');
  const lock = (lane: string, timeoutMs: number) =>
    acquireFileLock(`prazo-load-test-${lane}-${process.ppid}.lock`, {
      timeoutMs,
      pollMs: 100,
      what: `${lane} load test`,
    });
  if (!REAL_TIME_ALONE.includes(path)) {
    const lane = lanes.find((name) => REAL_TIME_LANES[name].includes(path));
    if (lane !== undefined) releases.push(await lock(lane, 300_000));
    return;
  }
  const until = Date.now() + 300_000;
  for (;;) {
    releases.push(await lock(lanes[0]!, Math.max(0, until - Date.now())));
    try {
      for (const lane of lanes.slice(1)) releases.push(await lock(lane, 0));
      return;
    } catch (error) {
      for (const release of releases.splice(0).reverse()) release();
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}, 310_000);
afterAll(() => {
  for (const release of releases.reverse()) release();
  releases = [];
});
