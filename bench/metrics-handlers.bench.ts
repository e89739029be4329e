/**
 * CPU cost of the metrics adapters' event handlers alone, per call (one `attempt-end` + one
 * `request-end`, what a successful single-attempt call emits), measured as process CPU time so that
 * a loaded machine changes it less than wall time, and the cost the next scrape or collection pays
 * for those calls, spread over them. No HTTP: the events come from the test double of a dependency's
 * event source.
 *
 *   node --import tsx bench/metrics-handlers.bench.ts
 */
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { instrument as instrumentOtel } from '../src/observe/otel.js';
import { instrument as instrumentPrometheus } from '../src/observe/prometheus.js';
import { createEventSourceDouble } from '../test/support/event-source-double.js';

class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const CALLS = 300_000;
const WARM_UP = 50_000;
const dep = createEventSourceDouble('bench');
const attemptEnd = {
  requestId: 1,
  attempt: 1,
  kind: 'original' as const,
  instance: 'http://127.0.0.1:1',
  durationMs: 3.2,
  outcome: 'success' as const,
  won: true,
};
const requestEnd = { requestId: 1, outcome: 'success' as const, durationMs: 3.5, attempts: 1 };
const call = (): void => {
  dep.emit('attempt-end', attemptEnd);
  dep.emit('request-end', requestEnd);
};

function cpuNsPerCall(): number {
  for (let i = 0; i < WARM_UP; i++) call();
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / CALLS;
}

async function cpuNsPerCallOf(read: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await read();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / (WARM_UP + CALLS); // it reads the warm-up's calls too
}

const rows: Array<[string, number[]]> = [
  ['no listener', []],
  ['prazo/prometheus', []],
  ['prazo/prometheus: the next scrape, per call recorded', []],
  ['prazo/otel', []],
  ['prazo/otel: the next collection, per call recorded', []],
];
for (let round = 0; round < 5; round++) {
  rows[0]![1].push(cpuNsPerCall());
  const registry = new Registry();
  const prometheus = instrumentPrometheus(dep, { registry });
  await registry.metrics();
  rows[1]![1].push(cpuNsPerCall());
  rows[2]![1].push(await cpuNsPerCallOf(() => registry.metrics()));
  prometheus.detach();
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  const otel = instrumentOtel(dep, { meterProvider: provider });
  await reader.collect();
  rows[3]![1].push(cpuNsPerCall());
  rows[4]![1].push(await cpuNsPerCallOf(() => reader.collect()));
  otel.detach();
  await provider.shutdown();
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${CALLS} calls × 5 rounds, Node ${process.version}\n`);
console.log('| handlers | CPU ns per call (median of 5) | rounds |');
console.log('| --- | ---: | --- |');
for (const [name, xs] of rows)
  console.log(`| ${name} | ${Math.round(median(xs))} | ${xs.map(Math.round).join(' / ')} |`);
