import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { startDouble } from '@prazo/lab/double';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalibrateOutput } from '../src/cli/calibrate.js';
import { cli } from '../src/cli/capture.test-helper.js';
import { dependency } from '../src/client/dependency.js';
import { checkFleetDrift } from '../src/fleet/fleet-drift.js';
import { createFleetLatencyFeed, type FleetLatencyStaleEvent } from '../src/fleet/fleet-latency-feed.js';
import { createPrometheusApi } from '../src/fleet/prometheus-api.js';
import { readFleetLatency } from '../src/fleet/read-fleet-latency.js';
import { instrument } from '../src/observe/prometheus.js';
import { DURATION_BUCKETS_SECONDS } from '../src/wire/metric-names.js';
import { alive, poll, startPrometheus, stopByPid, type TestPrometheus } from './support/prometheus-server.js';
import { findTool } from './support/tools.js';

const prometheusBin = findTool('prometheus');
const STEP_S = 5;
/** Phases of the load, seconds: healthy, one process degraded, healthy again. */
const HEALTHY_BEFORE_S = 12;
const DEGRADED_S = 10;
const HEALTHY_AFTER_S = 12;
/**
 * The p99 each process is calibrated with: the first two generously (their 840 ms read timeout lets
 * the degraded answers through, and is far above the fleet's p99 × 1.4); the third near the fleet's
 * healthy p99, as a recent calibration would give it.
 */
const CONFIGURED_P99_MS = [600, 600, 75];

interface Fleet {
  child: ChildProcess;
  port: number;
  samples?: Array<[number, number]>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile of raw samples. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Width, ms, of the histogram bucket that holds `ms` (the resolution `histogram_quantile` has there). */
function bucketWidthMs(ms: number): number {
  const bounds = DURATION_BUCKETS_SECONDS.map((s) => s * 1000);
  const i = bounds.findIndex((b) => ms <= b);
  return i <= 0 ? bounds[0]! : bounds[i]! - bounds[i - 1]!;
}

const title = 'prazo reads a real Prometheus scraping a fleet of three processes';
const skipped = prometheusBin ? '' : ' — skipped: prometheus not found (Debian: prometheus)';
describe.skipIf(!prometheusBin)(`${title}${skipped}`, () => {
  let prometheus: TestPrometheus | undefined;
  let url = '';
  const fleet: Fleet[] = [];
  let degradedFromMs = 0;
  let degradedToMs = 0;
  let loadStartMs = 0;
  let loadEndMs = 0;
  const closers: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const child = fork(
        join(import.meta.dirname, 'support', 'fleet-process.ts'),
        [String(i + 1), String(CONFIGURED_P99_MS[i])],
        {
          execArgv: ['--import', 'tsx'],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        },
      );
      const { port } = await new Promise<{ port: number }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { port: number }));
        child.once('exit', (code) => reject(new Error(`fleet process exited early (${code})`)));
      });
      fleet.push({ child, port });
    }
    prometheus = await startPrometheus({
      bin: prometheusBin!,
      job: 'checkout',
      targets: fleet.map((f) => `127.0.0.1:${f.port}`),
    });
    url = prometheus.url;
    await poll(
      async () => {
        const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent('sum(up{job="checkout"})')}`);
        const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
        return Number(body.data.result[0]?.value[1]) === 3 ? true : undefined;
      },
      30_000,
      `three scraped targets (Prometheus stderr: ${prometheus?.stderr()})`,
    );
    loadStartMs = Date.now();
    await sleep(HEALTHY_BEFORE_S * 1000);
    degradedFromMs = Date.now();
    fleet[1]!.child.send('degrade');
    await sleep(DEGRADED_S * 1000);
    fleet[1]!.child.send('recover');
    degradedToMs = Date.now();
    await sleep(HEALTHY_AFTER_S * 1000);
    loadEndMs = Date.now();
    // Two more scrapes, so the last step holds every call.
    await sleep(2_000);
  }, 110_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    for (const f of fleet) await stopByPid(f.child);
    await prometheus?.stop();
    for (const f of fleet) expect(alive(f.child.pid)).toBe(false);
    expect(alive(prometheus?.process.pid)).toBe(false);
  }, 30_000);

  const rangeArgs = () => {
    const rangeS = Math.ceil((Date.now() - loadStartMs) / 1000 / STEP_S) * STEP_S + STEP_S;
    return ['--range', `${rangeS}s`, '--step', `${STEP_S}s`];
  };

  it('names the processes whose read timeout drifted from the fleet p99', async () => {
    const api = createPrometheusApi({ url });
    const query = {
      dependency: 'inventory',
      match: 'job="checkout"',
      rangeMs: 120_000,
      stepMs: STEP_S * 1000,
    };
    const report = await checkFleetDrift(api, { ...query, slack: 1.4, tolerance: 0.5, minSamples: 100 });
    // The fleet's healthy p99 lies between these (the degraded slice, 400 ms answers, is left out).
    const [lowMs, highMs] = [20, 150];
    // On a failure, the steps the fleet's p99 was read from and those left out, against the time
    // process 2 was slow (a CI run on a loaded machine read 361 ms here, and said nothing of why).
    let steps = '';
    const p99 = report.fleetP99Ms;
    if (p99 === null || !(p99 > lowMs && p99 < highMs)) {
      const { selection } = await readFleetLatency(api, query);
      const step = (x: { startMs: number; count: number; p50Ms: number; p99Ms: number }) =>
        `${x.startMs - loadStartMs} ms: ${x.count} calls, p50 ${x.p50Ms}, p99 ${x.p99Ms}`;
      steps = `degraded ${degradedFromMs - loadStartMs}–${degradedToMs - loadStartMs} ms after the load started; kept: ${selection.included.map(step).join('; ')}; left out: ${selection.excluded.map((x) => `${step(x)} (${x.reason})`).join('; ')}`;
    }
    expect(report.fleetP99Ms, steps).toBeGreaterThan(lowMs);
    expect(report.fleetP99Ms, steps).toBeLessThan(highMs);
    const instance = (i: number) => `127.0.0.1:${fleet[i]!.port}`;
    expect(report.processes.map((p) => p.process['instance']).sort()).toEqual([0, 1, 2].map(instance).sort());
    expect(report.drifted.map((p) => [p.process['instance'], p.readMs, p.direction]).sort()).toEqual(
      [
        [instance(0), 840, 'timeout-too-generous'],
        [instance(1), 840, 'timeout-too-generous'],
      ].sort(),
    );
  });

  it('calibrates on the fleet p99 of the raw samples and names the degraded slice it excludes', async () => {
    const {
      code,
      stdout,
      stderr: err,
    } = await cli(
      'calibrate',
      '--prometheus',
      url,
      '--dependency',
      'inventory',
      '--match',
      'job="checkout"',
      ...rangeArgs(),
      '--deadline',
      '1500',
      '--json',
    );
    expect(err).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as CalibrateOutput;
    expect(out.fleet?.kind).toBe('classic');
    expect(out.fleet?.queries.p99).toContain('histogram_quantile(0.99, sum by (le) (rate(');

    // The degraded slice: excluded, named, and overlapping the time process 2 was slow.
    const overlapping = out.excluded.filter((s) => s.endMs > degradedFromMs && s.startMs < degradedToMs);
    expect(overlapping.length).toBeGreaterThan(0);
    for (const s of overlapping.filter((x) => x.reason !== 'too-few-samples')) {
      expect(s.reason).toBe('p99-outlier');
      expect(s.detail).toMatch(/above 2 × the median slice p99/);
    }
    expect(overlapping.some((s) => s.reason === 'p99-outlier')).toBe(true);
    // Every step wholly inside the degradation is excluded; a step that only grazes it (the first
    // slow answers arrive 400 ms late, and are scraped up to 1 s later) may hold too few slow calls to
    // move its p99, and is then rightly kept.
    const margin = 1_500;
    for (const s of out.included) {
      const inside = s.startMs >= degradedFromMs + margin && s.endMs <= degradedToMs + margin;
      expect(inside, `included slice ${s.startMs}–${s.endMs} (p99 ${s.p99Ms} ms)`).toBe(false);
      const overlap = Math.min(s.endMs, degradedToMs) - Math.max(s.startMs, degradedFromMs);
      expect(overlap, `included slice ${s.startMs}–${s.endMs}`).toBeLessThan(STEP_S * 1000 - margin);
    }

    // The raw samples of the three processes in the steps prazo kept: the same calls on both sides.
    // A step kept because it only grazes the degradation holds its few slow calls on both sides too
    // (a fixed window around the degradation left them out of the raw side alone: on a loaded CI
    // machine, 120 against 83 ms). A call is scraped up to 1 s after it ended.
    for (const f of fleet) {
      const done = once(f.child, 'message');
      f.child.send('stop');
      f.samples = ((await done)[0] as { samples: Array<[number, number]> }).samples;
    }
    const kept = (at: number) => out.included.some((s) => at > s.startMs - 1_000 && at <= s.endMs);
    const raw = fleet.flatMap((f) => f.samples!.filter(([at]) => kept(at)).map(([, ms]) => ms));
    expect(raw.length).toBeGreaterThan(1_000);
    const rawP99 = percentile(raw, 99);
    const error = bucketWidthMs(rawP99);
    expect(Math.abs(out.p99Ms - rawP99), `fleet p99 ${out.p99Ms} ms vs raw ${rawP99} ms`).toBeLessThanOrEqual(
      error,
    );
    expect(out.healthy!.count).toBeGreaterThan(500);

    // prazo's p99 per slice is the one histogram_quantile computes for that step: both interpolate
    // within the same bucket, so they differ by less than its width (by far less when it holds many calls).
    const byEnd = new Map(out.fleet!.prometheusP99Ms.map((s) => [s.endMs, s.p99Ms]));
    for (const s of out.included) {
      const server = byEnd.get(s.endMs);
      expect(server, `step ending ${s.endMs}`).not.toBeNull();
      expect(Math.abs(s.p99Ms - server!)).toBeLessThanOrEqual(bucketWidthMs(server!));
    }
    expect(loadEndMs).toBeGreaterThan(loadStartMs);
  }, 40_000);

  it('keeps the last fleet figures and reports staleness when Prometheus stops; calls are unaffected', async () => {
    const feed = createFleetLatencyFeed({
      prometheus: { url, timeoutMs: 2_000 },
      query: { dependency: 'inventory', match: 'job="checkout"', rangeMs: 120_000, stepMs: 5_000 },
      intervalMs: 500,
      staleAfterMs: 1_500,
      minSamples: 100,
    });
    closers.push(() => feed.close());
    const double = await startDouble({ seed: 9, behaviour: { answerAtMs: 5 } });
    closers.push(() => double.close());
    const local = dependency({
      name: 'inventory',
      origins: [double.url],
      latency: { p99Ms: 900, p95Ms: 800 },
      userDeadlineMs: 3_000,
      attempts: 2,
      liveRefreshMs: 100,
      // the local window never has enough samples here: the fleet's figures are what it has
      liveMinSamples: 100_000,
      fleetLatency: feed,
    });
    closers.push(() => local.close());
    const registry = new Registry();
    instrument(local, { registry, fleetLatency: feed });

    const first = await feed.refresh();
    expect(first, JSON.stringify(feed.state())).toBeDefined();
    expect(first!.stale).toBe(false);
    expect(first!.p99Ms).toBeGreaterThan(20);
    expect(first!.p99Ms).toBeLessThan(150); // the degraded slice is not in it
    const call = async () => {
      const t0 = performance.now();
      const res = await local.request({ path: '/' });
      await res.body.text();
      return performance.now() - t0;
    };
    await call();
    await sleep(150);
    await call();
    const before = local.policy();
    expect(before.sources.p99).toBe('fleet');
    expect(before.p99Ms).toBe(first!.p99Ms);
    expect(before.p95Ms).toBe(first!.p95Ms);

    // Prometheus stops mid-run.
    const stale: FleetLatencyStaleEvent[] = [];
    feed.on('stale', (e) => stale.push(e));
    feed.start();
    await stopByPid(prometheus!.process);
    expect(alive(prometheus!.process.pid)).toBe(false);

    const failed = await cli(
      'calibrate',
      '--prometheus',
      url,
      '--dependency',
      'inventory',
      ...rangeArgs(),
      '--deadline',
      '1500',
    );
    expect(failed.code).toBe(3);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(
      /^prazo calibrate: PROMETHEUS_UNAVAILABLE: cannot read Prometheus at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );

    await poll(async () => (stale.length > 0 ? true : undefined), 10_000, 'a stale event');
    expect(stale[0]!.error?.code).toBe('PROMETHEUS_UNAVAILABLE');
    expect(stale[0]!.snapshot?.p99Ms).toBe(first!.p99Ms);
    const durations: number[] = [];
    for (let i = 0; i < 20; i++) {
      durations.push(await call());
      await sleep(20);
    }
    expect(Math.max(...durations)).toBeLessThan(1_000);
    const after = local.policy();
    expect(after.p99Ms).toBe(before.p99Ms);
    expect(after.readMs).toBe(before.readMs);
    expect(after.sources.p99).toBe('fleet');
    expect(feed.read(Date.now())?.stale).toBe(true);
    const text = await registry.metrics();
    expect(text).toMatch(/prazo_fleet_latency_stale\{dependency="inventory"\} 1/);
    expect(text).toMatch(/prazo_fleet_latency_age_seconds\{dependency="inventory"\} \d/);
  }, 40_000);
});
