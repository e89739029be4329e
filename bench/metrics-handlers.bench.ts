/**
 * CPU cost of the metrics adapters' event handlers alone, per call (one `attempt-end` + one
 * `request-end`, what a successful single-attempt call emits), measured as process CPU time so that
 * a loaded machine changes it less than wall time. No HTTP: the events come from the test double of
 * a dependency's event source.
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
  for (let i = 0; i < 50_000; i++) call(); // warm-up
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / CALLS;
}

const rows: Array<[string, number[]]> = [
  ['no listener', []],
  ['prazo/prometheus', []],
  ['prazo/otel', []],
];
for (let round = 0; round < 5; round++) {
  rows[0]![1].push(cpuNsPerCall());
  const prometheus = instrumentPrometheus(dep, { registry: new Registry() });
  rows[1]![1].push(cpuNsPerCall());
  prometheus.detach();
  const provider = new MeterProvider({ readers: [new OnDemandReader()] });
  const otel = instrumentOtel(dep, { meterProvider: provider });
  rows[2]![1].push(cpuNsPerCall());
  otel.detach();
  await provider.shutdown();
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${CALLS} calls × 5 rounds, Node ${process.version}\n`);
console.log('| handlers | CPU ns per call (median of 5) | rounds |');
console.log('| --- | ---: | --- |');
for (const [name, xs] of rows)
  console.log(`| ${name} | ${Math.round(median(xs))} | ${xs.map(Math.round).join(' / ')} |`);
