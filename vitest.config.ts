import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// PRAZO_TEST_UNDICI_DIR=<dir with node_modules/undici> runs the suites against that copy of undici
// instead of prazo's own (CI: undici 8 on the newer Node lines). prazo loads its copy through Node's
// module cache (src/transport/undici-module.ts), which an alias does not reach: that module is
// replaced by one that imports the aliased `undici`.
const undiciDir = process.env.PRAZO_TEST_UNDICI_DIR;
const undiciModule = fileURLToPath(new URL('./test/support/undici-module-aliased.ts', import.meta.url));

/**
 * The real-time load tests: files that drive load for seconds and judge what they measure on the
 * wall clock against a tight bound (a drill's figures, adaptive limits against a server of known
 * capacity, the overload experiment's goodput, the peers' attempt timeouts). They run one file at a
 * time, after everything else, so that no other test file shares the 2 cores with them.
 *
 * Every other file under test/ runs two at a time: it starts its own servers on port 0 (never a fixed
 * port, never a shared temporary path) and its timing bounds tolerate a busy machine. That includes
 * real-time tests whose verdict does not hang on speed (the soak judges leaks, not rates; the browser
 * test judges what the page draws; the Prometheus tests wait for scrapes). A new test file joins this
 * list when it keeps both cores busy for seconds and asserts a rate, a latency percentile, a limit
 * learnt from latency, or a timer's precision under that load; a test that merely waits for a timeout
 * or a scrape does not.
 */
export const REAL_TIME_LOAD_FILES = [
  'test/drill.test.ts',
  'test/drill-peers.test.ts',
  'test/client-overload.test.ts',
  'test/overload-experiment.test.ts',
  'test/overload-transient.test.ts',
  // 10 000 keyed POSTs with injected faults: a stalled core turns attempts into timeouts and spends
  // the retry budget the test sizes for the faults alone.
  'test/idempotency-load.test.ts',
];

export default defineConfig({
  ...(undiciDir
    ? {
        resolve: {
          alias: [
            { find: /^undici$/, replacement: `${undiciDir}/node_modules/undici/index.js` },
            { find: /^(?:\.\.?\/)+(?:transport\/)?undici-module\.js$/, replacement: undiciModule },
          ],
        },
      }
    : {}),
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Four workers on 2 cores: most integration files spend their time waiting on real servers,
    // timeouts or scrapes (a whole run keeps the cores about half busy), so more files overlap those
    // waits. The real-time load tests take one.
    maxWorkers: 4,
    reporters: ['default', './test/support/skipped-reporter.ts'],
    projects: [
      // Unit and property tests (fake clock), in threads that keep their modules from file to file: a
      // unit test leaves no global state behind (timers, the global dispatcher, process listeners).
      {
        extends: true,
        test: { name: 'unit', include: ['src/**/*.test.ts'], pool: 'threads', isolate: false },
      },
      // The integration tests, each file in a process of its own, two files at a time with the above.
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: REAL_TIME_LOAD_FILES },
      },
      // Then the real-time load tests, alone on the machine, one file at a time.
      {
        extends: true,
        test: {
          name: 'real-time',
          include: REAL_TIME_LOAD_FILES,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
