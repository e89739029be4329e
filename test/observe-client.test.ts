import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { type Double, startDouble } from '@prazo/lab/double';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { Deadline } from '../src/deadline/deadline.js';
import { isPrazoError } from '../src/errors.js';
import { createDriftMonitor } from '../src/observe/drift-monitor.js';
import { instrument as instrumentOtel } from '../src/observe/otel.js';
import { instrument } from '../src/observe/prometheus.js';
import { CollectingReader } from './support/collecting-reader.js';
import { metricValue as value } from './support/metric-value.js';

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function setup(
  behaviour: Parameters<typeof startDouble>[0] = {},
  p99Ms = 50,
  connectP99Ms?: number,
): Promise<{ dep: Dependency; double: Double }> {
  const double = await startDouble({ seed: 3, ...behaviour });
  open.push(double);
  const dep = dependency({
    name: 'payments',
    origins: [double.url],
    latency: connectP99Ms === undefined ? { p99Ms } : { p99Ms, connectP99Ms },
    userDeadlineMs: 5_000,
    attempts: 2,
  });
  open.push(dep);
  return { dep, double };
}

/** Waits, at most `marginMs`, until the next multiple of `sliceMs` on the clock is `marginMs` away. */
async function clearOfSliceMark(sliceMs: number, marginMs: number): Promise<void> {
  const toMark = sliceMs - (Date.now() % sliceMs);
  if (toMark < marginMs) await new Promise((resolve) => setTimeout(resolve, toMark + 5));
}

async function calls(
  dep: Dependency,
  n: number,
  options: Parameters<Dependency['request']>[0] = { path: '/' },
) {
  const outcomes: Array<'ok' | string> = [];
  for (let i = 0; i < n; i++) {
    try {
      const res = await dep.request(options);
      await res.body.text();
      outcomes.push('ok');
    } catch (error) {
      outcomes.push(isPrazoError(error) ? error.code : 'other');
    }
  }
  return outcomes;
}

describe('prazo/prometheus on a real dependency', () => {
  it('counts calls, attempts by kind and the retry ratio of a dependency answering 503 to a share of calls', async () => {
    // p99 500 ms: a read timeout of 700 ms, far from anything a loaded machine adds.
    const { dep, double } = await setup({ behaviour: { statuses: [{ status: 503, share: 0.3 }] } }, 500);
    const registry = new Registry();
    instrument(dep, { registry });
    let retries = 0;
    dep.on('retry', () => retries++);
    await calls(dep, 60);
    const d = { dependency: 'payments' };
    const ok = await value(registry, 'prazo_requests_total', { ...d, outcome: 'success' });
    const failed = await value(registry, 'prazo_requests_total', { ...d, outcome: 'failure' });
    expect((ok ?? 0) + (failed ?? 0)).toBe(60);
    expect(await value(registry, 'prazo_attempts_total', { ...d, kind: 'original' })).toBe(60);
    expect(retries).toBeGreaterThan(5);
    expect(await value(registry, 'prazo_attempts_total', { ...d, kind: 'retry' })).toBe(retries);
    expect(double.stats().received).toBe(60 + retries);
    const ratio = await value(registry, 'prazo_retry_ratio', d);
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeCloseTo(dep.budget().ratio, 6);
    const text = await registry.metrics();
    expect(text).toContain(
      `prazo_attempt_duration_seconds_count{dependency="payments",kind="retry"} ${retries}`,
    );
    expect(await value(registry, 'prazo_timeout_seconds', { ...d, phase: 'read' })).toBe(
      dep.policy().readMs / 1000,
    );
  });

  it('counts read timeouts by phase', async () => {
    // read timeout 28 ms; connect timeout 280 ms, so a slow connect on a loaded machine is not counted
    const { dep } = await setup({ behaviour: { answerAtMs: 400 } }, 20, 200);
    const registry = new Registry();
    instrument(dep, { registry });
    const outcomes = await calls(dep, 3);
    expect(outcomes.every((o) => o !== 'ok')).toBe(true);
    expect(
      await value(registry, 'prazo_timeouts_total', { dependency: 'payments', phase: 'read' }),
    ).toBeGreaterThanOrEqual(3);
    expect(await value(registry, 'prazo_timeouts_total', { dependency: 'payments', phase: 'connect' })).toBe(
      0,
    );
  });

  it('counts a deadline fast-fail once as a fast-fail and once as a failed request, with no attempt', async () => {
    const { dep, double } = await setup();
    const registry = new Registry();
    instrument(dep, { registry });
    const outcomes = await calls(dep, 2, { path: '/', deadline: Deadline.after(5) });
    expect(outcomes).toEqual(['DEADLINE_INSUFFICIENT', 'DEADLINE_INSUFFICIENT']);
    const d = { dependency: 'payments' };
    expect(await value(registry, 'prazo_deadline_fast_fail_total', d)).toBe(2);
    expect(await value(registry, 'prazo_requests_total', { ...d, outcome: 'failure' })).toBe(2);
    expect(await value(registry, 'prazo_attempts_total', { ...d, kind: 'original' })).toBe(0);
    expect(double.stats().received).toBe(0);
  });
});

describe('prazo/otel on a real dependency', () => {
  it('reports the calls and the retry ratio', async () => {
    const { dep } = await setup({ behaviour: { statuses: [{ status: 503, share: 0.3 }] } });
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    open.push({ close: () => provider.shutdown() });
    instrumentOtel(dep, { meterProvider: provider });
    await calls(dep, 30);
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const requests = metrics.find((m) => m.descriptor.name === 'prazo.client.requests');
    const total = requests?.dataPoints.reduce((sum, p) => sum + (p.value as number), 0);
    expect(total).toBe(30);
    const ratio = metrics.find((m) => m.descriptor.name === 'prazo.client.retry_ratio')?.dataPoints[0]?.value;
    expect(ratio).toBeCloseTo(dep.budget().ratio, 6);
  });
});

describe('the drift monitor on a real dependency', () => {
  it("finds a timeout far above the live p99 too generous and, in 'auto' mode, lowers it one bounded step", async () => {
    const { dep } = await setup({}, 1000); // read timeout 1400 ms; the double answers at once
    const monitor = createDriftMonitor({
      dependencies: [dep],
      mode: 'auto',
      minSamples: 50,
      userDeadlineMs: 5_000,
    });
    const registry = new Registry();
    instrument(dep, { registry, driftMonitor: monitor });
    const drift: string[] = [];
    monitor.on('drift', (e) => drift.push(e.direction));
    // The live window cuts slices on 10 s marks of the wall clock. Calls split across a mark can
    // leave one slice too small or an outlier, and the check then rightly finds too few healthy
    // samples: start the burst clear of the next mark.
    await clearOfSliceMark(10_000, 3_000);
    await calls(dep, 80);
    const [result] = monitor.checkNow();
    expect(result?.skipped).toBeUndefined();
    expect(drift).toEqual(['timeout-too-generous']);
    expect(result?.recalibrated?.previous.readMs).toBe(1400);
    expect(dep.policy().readMs).toBe(1120); // one step: 1400 / 1.25
    expect(await value(registry, 'prazo_drift_events_total', { direction: 'timeout-too-generous' })).toBe(1);
    expect(await value(registry, 'prazo_recalibrations_total', { dependency: 'payments' })).toBe(1);
    expect(await value(registry, 'prazo_timeout_seconds', { phase: 'read' })).toBe(1.12);
    monitor.stop();
  });
});
