/**
 * Latency histogram benchmark: record cost and p99-query cost of prazo's LatencyHistogram against
 * hdr-histogram-js (JS and WebAssembly) and prom-client's Histogram.observe (record only: prom-client
 * has no percentile query), in one run, reported as ratios to prazo.
 *
 * Run: node --expose-gc --import tsx bench/histogram.bench.ts
 */

import { createRandom } from '@prazo/lab/random';
import * as hdr from 'hdr-histogram-js';
import { Histogram as PromHistogram, Registry } from 'prom-client';
import { LatencyHistogram } from '../src/latency/histogram.js';

const SAMPLES = 1_000_000;
const RECORD_ROUNDS = 11;
const QUERY_CALLS = 2_000;
const QUERY_ROUNDS = 7;

// Long-tailed latencies in ms: log-normal around 60 ms (p99 ≈ 180 ms) with 0.5 % of calls in seconds.
const random = createRandom(42);
const valuesMs = new Float64Array(SAMPLES);
const valuesUs = new Float64Array(SAMPLES);
const valuesS = new Float64Array(SAMPLES);
for (let i = 0; i < SAMPLES; i++) {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const ms = random() < 0.005 ? 1000 + random() * 9000 : 60 * Math.exp(0.4723 * normal);
  valuesMs[i] = ms;
  valuesUs[i] = Math.round(ms * 1000); // hdr-histogram-js records integers: microseconds, as prazo does inside
  valuesS[i] = ms / 1000; // prom-client convention: seconds
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

interface Subject {
  name: string;
  record?: () => number; // ns per record
  query?: () => number; // ns per p99 query
  p99Ms?: () => number;
  footprint: string;
  done?: () => void;
}

function timeRecords(recordAll: () => void): number {
  gc();
  const start = process.hrtime.bigint();
  recordAll();
  return Number(process.hrtime.bigint() - start) / SAMPLES;
}

function timeQueries(query: () => number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < QUERY_CALLS; i++) sink += query();
  const ns = Number(process.hrtime.bigint() - start) / QUERY_CALLS;
  if (sink === -1) console.log(sink); // keep the result alive
  return ns;
}

function prazoSubject(): Subject {
  let h = new LatencyHistogram();
  return {
    name: 'prazo LatencyHistogram',
    footprint: '26 KB fixed',
    record: () => {
      h = new LatencyHistogram();
      return timeRecords(() => {
        for (let i = 0; i < SAMPLES; i++) h.record(valuesMs[i]!);
      });
    },
    query: () => timeQueries(() => h.percentile(99)),
    p99Ms: () => h.percentile(99),
  };
}

function hdrSubject(useWebAssembly: boolean): Subject {
  const build = () =>
    hdr.build({
      bitBucketSize: 32,
      autoResize: true,
      lowestDiscernibleValue: 1,
      highestTrackableValue: 3_600_000_000,
      numberOfSignificantValueDigits: 3,
      useWebAssembly,
    });
  let h = build();
  return {
    name: `hdr-histogram-js ${useWebAssembly ? 'WASM' : 'JS'} (3 digits)`,
    footprint: `${Math.round(h.estimatedFootprintInBytes / 1024)} KB (estimated, auto-resize)`,
    record: () => {
      h.destroy();
      h = build();
      return timeRecords(() => {
        for (let i = 0; i < SAMPLES; i++) h.recordValue(valuesUs[i]!);
      });
    },
    query: () => timeQueries(() => h.getValueAtPercentile(99)),
    p99Ms: () => h.getValueAtPercentile(99) / 1000,
    done: () => h.destroy(),
  };
}

function promSubject(): Subject {
  const registry = new Registry();
  let n = 0;
  const build = () =>
    new PromHistogram({
      name: `bench_latency_seconds_${n++}`,
      help: 'bench',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  let h = build();
  return {
    name: 'prom-client Histogram.observe (default buckets)',
    footprint: '11 buckets',
    record: () => {
      registry.clear();
      h = build();
      return timeRecords(() => {
        for (let i = 0; i < SAMPLES; i++) h.observe(valuesS[i]!);
      });
    },
  };
}

function exactP99(): number {
  const sorted = Float64Array.from(valuesMs).sort();
  return sorted[Math.ceil(0.99 * SAMPLES) - 1]!;
}

async function main(): Promise<void> {
  const subjects: Subject[] = [prazoSubject(), hdrSubject(false)];
  let wasmNote = '';
  try {
    hdr.initWebAssemblySync();
    subjects.push(hdrSubject(true));
  } catch (error) {
    wasmNote = `hdr-histogram-js WASM unavailable here: ${(error as Error).message}`;
  }
  subjects.push(promSubject());

  const records = new Map<string, number[]>();
  const queries = new Map<string, number[]>();
  // Rounds interleave the subjects so drift on a shared machine hits all of them alike.
  for (let round = 0; round < RECORD_ROUNDS; round++) {
    for (const s of subjects) {
      if (!s.record) continue;
      const ns = s.record();
      if (round > 0) records.set(s.name, [...(records.get(s.name) ?? []), ns]); // round 0 warms up
    }
  }
  for (let round = 0; round < QUERY_ROUNDS; round++) {
    for (const s of subjects) {
      if (!s.query) continue;
      const ns = s.query();
      if (round > 0) queries.set(s.name, [...(queries.get(s.name) ?? []), ns]);
    }
  }

  const prazoRecord = median(records.get(subjects[0]!.name)!);
  const prazoQuery = median(queries.get(subjects[0]!.name)!);
  const exact = exactP99();
  const rows = [
    '| histogram | record (ns/op) | record vs prazo | p99 query (µs/op) | p99 query vs prazo | p99 of 1 M samples (exact ' +
      `${exact.toFixed(2)} ms) | memory |`,
    '|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const s of subjects) {
    const r = median(records.get(s.name)!);
    const q = queries.has(s.name) ? median(queries.get(s.name)!) : undefined;
    const p99 = s.p99Ms?.();
    rows.push(
      `| ${s.name} | ${r.toFixed(1)} | ${(r / prazoRecord).toFixed(2)}× | ${q === undefined ? '—' : (q / 1000).toFixed(2)} | ` +
        `${q === undefined ? '—' : `${(q / prazoQuery).toFixed(2)}×`} | ` +
        `${p99 === undefined ? '—' : `${p99.toFixed(2)} ms (${(((p99 - exact) / exact) * 100).toFixed(2)} %)`} | ${s.footprint} |`,
    );
    s.done?.();
  }
  console.log(
    `Node ${process.version}, ${SAMPLES.toLocaleString('en-US')} long-tailed samples, medians of ${RECORD_ROUNDS - 1} record rounds and ${QUERY_ROUNDS - 1} × ${QUERY_CALLS} queries; ${new Date().toISOString()}`,
  );
  console.log('');
  console.log(rows.join('\n'));
  if (wasmNote) console.log(`\n${wasmNote}`);
}

await main();
