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
export const REAL_TIME_LOAD_FILES: readonly string[] = [
  'test/drill.test.ts',
  'test/drill-peers.test.ts',
  'test/client-overload.test.ts',
  'test/overload-experiment.test.ts',
  'test/overload-transient.test.ts',
  // 10 000 keyed POSTs with injected faults: a stalled core turns attempts into timeouts and spends
  // the retry budget the test sizes for the faults alone.
  'test/idempotency-load.test.ts',
];

/**
 * Long but light files that run beside the load tests, one at a time, instead of holding a worker of
 * the parallel group: they mostly wait (on scrapes, timers), use a few percent of a core, and judge
 * nothing a little background load can move. A Prometheus scraping three processes for 45 s.
 */
export const REAL_TIME_COMPANION_FILES: readonly string[] = ['test/fleet-prometheus.test.ts'];
