/**
 * Observability overhead: requests/s of prazo's dependency() with prom-client metrics on
 * (`prazo/prometheus`, scraped once a second), with OpenTelemetry metrics on (`prazo/otel`, collected
 * once a second), with tracing (`instrumentTracing`) on the API's no-op tracer and on the SDK with a
 * batch span processor (W3C propagation, spans exported to a discarding exporter), with everything
 * off, its fetch facade, against bare undici `Pool.request`, `undici.request` and `undici.fetch` —
 * same run, alternating rounds, C requests in flight,
 * a keep-alive server in a child process on 127.0.0.1 (client on CPU 0, server on CPU 1 when
 * `taskset` allows). prazo is the built package: build first.
 *
 *   npm run build && node --expose-gc --import tsx bench/metrics-overhead.bench.ts \
 *     [--rounds 20] [--seconds 1.5] [--concurrency 32] [--server http|raw] [--no-pin]
 */
import os from 'node:os';
import { trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { Agent, Pool, fetch as undiciFetch, request as undiciRequest } from 'undici';
import type { Dependency } from '../src/client/dependency.js';
import {
  type BenchClient,
  benchDependencyOptions,
  drive,
  importBuilt,
  median,
  parseLoadArgs,
  startBenchServer,
} from './support/load.js';

const { dependency } = await importBuilt<typeof import('../src/index.js')>('index');
const { instrument: instrumentPrometheus } =
  await importBuilt<typeof import('../src/observe/prometheus.js')>('prometheus');
const {
  instrument: instrumentOtel,
  instrumentTracing,
  createDurationProducer,
} = await importBuilt<typeof import('../src/observe/otel.js')>('otel');

/** Counts and drops finished spans: the SDK's whole cost without the network. */
const discarding: SpanExporter = {
  export(spans, done) {
    exported += spans.length;
    done({ code: 0 });
  },
  async shutdown() {},
};
let exported = 0;

type Client = BenchClient;

class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function prazo(origin: string, connections: number): Dependency {
  return dependency(benchDependencyOptions([origin], connections, false));
}

function wrap(dep: Dependency, extra: () => Promise<void> = async () => {}): Client {
  return {
    async call() {
      const res = await dep.request({ path: '/' });
      await res.body.text();
    },
    async close() {
      await extra();
      await dep.close();
    },
  };
}

/** Reads the metrics once a second, as a scraper or an exporter would. */
function every(ms: number, read: () => Promise<unknown>): () => Promise<void> {
  const timer = setInterval(() => void read(), ms);
  timer.unref();
  return async () => clearInterval(timer);
}

const contenders: Array<{ name: string; create(origin: string, connections: number): Client }> = [
  {
    name: 'undici Pool.request',
    create(origin, connections) {
      const pool = new Pool(origin, { connections });
      return {
        async call() {
          const { body } = await pool.request({ path: '/', method: 'GET' });
          await body.text();
        },
        close: () => pool.close(),
      };
    },
  },
  {
    name: 'undici.request',
    create(origin, connections) {
      const dispatcher = new Agent({ connections });
      const url = `${origin}/`;
      return {
        async call() {
          const { body } = await undiciRequest(url, { dispatcher });
          await body.text();
        },
        close: () => dispatcher.close(),
      };
    },
  },
  { name: 'prazo, metrics off', create: (origin, c) => wrap(prazo(origin, c)) },
  {
    name: 'prazo + prazo/prometheus',
    create(origin, c) {
      const dep = prazo(origin, c);
      const registry = new Registry();
      const handle = instrumentPrometheus(dep, { registry });
      const stop = every(1000, () => registry.metrics());
      return wrap(dep, async () => {
        await stop();
        handle.detach();
      });
    },
  },
  {
    name: 'prazo + prazo/otel',
    create(origin, c) {
      const dep = prazo(origin, c);
      const reader = new OnDemandReader();
      const provider = new MeterProvider({ readers: [reader] });
      const handle = instrumentOtel(dep, { meterProvider: provider });
      const stop = every(1000, () => reader.collect());
      return wrap(dep, async () => {
        await stop();
        handle.detach();
        await provider.shutdown();
      });
    },
  },
  {
    name: 'prazo + prazo/otel, duration producer',
    create(origin, c) {
      const dep = prazo(origin, c);
      const durations = createDurationProducer();
      const reader = new OnDemandReader({ metricProducers: [durations] });
      const provider = new MeterProvider({ readers: [reader] });
      const handle = instrumentOtel(dep, { meterProvider: provider, durations });
      const stop = every(1000, () => reader.collect());
      return wrap(dep, async () => {
        await stop();
        handle.detach();
        await provider.shutdown();
      });
    },
  },
  {
    name: 'prazo + tracing, no-op tracer',
    create(origin, c) {
      const dep = prazo(origin, c);
      // The API without an SDK: non-recording spans, the global (no-op) propagator.
      const handle = instrumentTracing(dep, { tracer: trace.getTracer('bench') });
      return wrap(dep, async () => handle.detach());
    },
  },
  {
    name: 'prazo + tracing, batch exporter',
    create(origin, c) {
      const dep = prazo(origin, c);
      const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discarding)] });
      const handle = instrumentTracing(dep, {
        tracer: provider.getTracer('bench'),
        propagator: new W3CTraceContextPropagator(),
      });
      return wrap(dep, async () => {
        handle.detach();
        await provider.shutdown();
      });
    },
  },
  {
    name: 'prazo fetch facade',
    create(origin, c) {
      const dep = prazo(origin, c);
      return {
        async call() {
          const res = await dep.fetch('/');
          await res.text();
        },
        close: () => dep.close(),
      };
    },
  },
  {
    name: 'undici.fetch',
    create(origin, connections) {
      const dispatcher = new Agent({ connections });
      const url = `${origin}/`;
      return {
        async call() {
          const res = await undiciFetch(url, { dispatcher });
          await res.text();
        },
        close: () => dispatcher.close(),
      };
    },
  },
];

let failures = 0;

async function main(): Promise<void> {
  const args = parseLoadArgs(process.argv.slice(2), { rounds: 20, seconds: 1.5 });
  const server = await startBenchServer(args.server, args.pin);
  const origin = server.origins[0];
  const chosen = contenders.filter(
    (c) =>
      c.name === 'undici Pool.request' ||
      args.only === undefined ||
      args.only.some((o) => c.name.startsWith(o)),
  );
  const results = new Map<string, number[]>(chosen.map((c) => [c.name, []]));
  const cpu = new Map<string, number[]>(chosen.map((c) => [c.name, []]));
  try {
    for (const c of chosen) {
      const client = c.create(origin, args.concurrency);
      await drive(client, args.concurrency, 1_000); // warm-up: JIT, connections
      await client.close();
    }
    for (let round = 0; round < args.rounds; round++) {
      const order = round % 2 === 0 ? chosen : [...chosen].reverse();
      for (const c of order) {
        (globalThis as { gc?: () => void }).gc?.();
        const client = c.create(origin, args.concurrency);
        const out = await drive(client, args.concurrency, args.seconds * 1000, undefined, () => {
          failures++;
        });
        await client.close();
        results.get(c.name)!.push((out.count / out.elapsedMs) * 1000);
        cpu.get(c.name)!.push(out.cpuUs / Math.max(1, out.count));
      }
    }
  } finally {
    server.stop();
  }
  const bare = median(results.get('undici Pool.request')!);
  const off = median(results.get('prazo, metrics off') ?? [Number.NaN]);
  const bareCpu = median(cpu.get('undici Pool.request')!);
  const offCpu = median(cpu.get('prazo, metrics off') ?? [Number.NaN]);
  console.log(
    `\n${args.rounds} rounds × ${args.seconds} s, ${args.concurrency} in flight, ${args.server === 'raw' ? 'raw node:net' : 'node:http'} server, ${server.pinned ? 'client on CPU 0 and server on CPU 1' : 'not pinned'}, Node ${process.version}, ${failures} failed calls, ${exported} spans exported, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end\n`,
  );
  console.log(
    '| client | req/s (median) | req/s ÷ undici | median of round ratios ÷ undici | req/s ÷ metrics off | client CPU µs/call (median) | CPU: undici ÷ client | CPU: metrics off ÷ client | req/s per round |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  const bareRounds = results.get('undici Pool.request')!;
  for (const [name, xs] of results) {
    const m = median(xs);
    const c = median(cpu.get(name)!);
    // Each round over the undici round of the same pass: drift on the machine cancels out.
    const paired = median(xs.map((x, i) => x / bareRounds[i]!));
    console.log(
      `| ${name} | ${Math.round(m)} | ${(m / bare).toFixed(3)} | ${paired.toFixed(3)} | ${(m / off).toFixed(3)} | ${c.toFixed(1)} | ${(bareCpu / c).toFixed(3)} | ${(offCpu / c).toFixed(3)} | ${xs.map((x) => Math.round(x)).join(' / ')} |`,
    );
  }
}

await main();
