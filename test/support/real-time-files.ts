/**
 * The real-time load tests: files that drive load for seconds and judge what they measure on the
 * wall clock against a tight bound (a drill's figures, adaptive limits against a server of known
 * capacity, the overload experiment's goodput, the peers' attempt timeouts). They run after
 * everything else, so that no other test file shares the 2 cores with them, in two lanes: a file
 * runs only while no other file of its lane does, and the two lanes run side by side.
 *
 * The lanes are set by what the files cost the machine, measured alone (`/usr/bin/time npx vitest
 * run <file>`, 2026-12-04, 2 cores): `busy` holds the files that keep about a core busy or start a
 * fleet of processes — the drill (28 processes, 0.65 of a core on average), the 10 000 keyed POSTs
 * (0.9), the overload experiment (0.45); `light` the files that mostly wait on their own servers'
 * timers — the adaptive limits (0.17), the transient (0.32), the peers (0.2). A busy file and a light
 * one together leave a core to spare on average, and each is the only one of its kind.
 *
 * Every other file under test/ runs four at a time: it starts its own servers on port 0 (never a
 * fixed port, never a shared temporary path) and its timing bounds tolerate a busy machine. That
 * includes real-time tests whose verdict does not hang on speed (the soak judges leaks, not rates; the
 * browser test judges what the page draws; the Prometheus tests wait for scrapes). A new test file
 * joins a lane when it keeps a core busy for seconds and asserts a rate, a latency percentile, a limit
 * learnt from latency, or a timer's precision under that load (`busy` if it costs half a core or more
 * on average, or starts more than a few processes); a test that merely waits for a timeout or a
 * scrape does not.
 */
export const REAL_TIME_LANES: Readonly<Record<'busy' | 'light', readonly string[]>> = {
  busy: [
    'test/drill.test.ts',
    'test/overload-experiment.test.ts',
    // 10 000 keyed POSTs with injected faults: a stalled core turns attempts into timeouts and spends
    // the retry budget the test sizes for the faults alone.
    'test/idempotency-load.test.ts',
  ],
  light: ['test/drill-peers.test.ts', 'test/client-overload.test.ts', 'test/overload-transient.test.ts'],
};

/** Every file of both lanes. */
export const REAL_TIME_LOAD_FILES: readonly string[] = [...REAL_TIME_LANES.busy, ...REAL_TIME_LANES.light];

/**
 * Long but light files that run beside the load tests instead of holding a worker of the parallel
 * group: they mostly wait (on scrapes, timers), use a few percent of a core, and judge nothing a
 * little background load can move. A Prometheus scraping three processes for 36 s.
 */
export const REAL_TIME_COMPANION_FILES: readonly string[] = ['test/fleet-prometheus.test.ts'];
