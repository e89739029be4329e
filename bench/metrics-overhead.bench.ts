/**
 * Metrics overhead: requests/s of prazo's dependency() with prom-client metrics on (`prazo/prometheus`,
 * scraped once a second), with OpenTelemetry metrics on (`prazo/otel`, collected once a second), with
 * metrics off, and bare undici `Pool.request` — same run, alternating rounds, C requests in flight,
 * a keep-alive node:http server in a child process on 127.0.0.1.
 *
 *   node --expose-gc --import tsx bench/metrics-overhead.bench.ts [--rounds 5] [--seconds 3] [--concurrency 32]
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { Pool } from 'undici';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { instrument as instrumentOtel } from '../src/observe/otel.js';
import { instrument as instrumentPrometheus } from '../src/observe/prometheus.js';

interface Args {
  rounds: number;
  seconds: number;
  concurrency: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { rounds: 5, seconds: 3, concurrency: 32 };
  for (let i = 0; i < argv.length; i += 2) {
    const value = Number(argv[i + 1]);
    if (argv[i] === '--rounds') args.rounds = value;
    else if (argv[i] === '--seconds') args.seconds = value;
    else if (argv[i] === '--concurrency') args.concurrency = value;
  }
  return args;
}

interface Client {
  call(): Promise<void>;
  close(): Promise<void>;
}

class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function prazo(origin: string, connections: number): Dependency {
  return dependency({
    name: 'bench',
    origins: [origin],
    latency: { p99Ms: 200, p95Ms: 50 },
    userDeadlineMs: 2_000,
    attempts: 2,
    connections,
  });
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
];

async function startServer(): Promise<{ origin: string; stop(): void }> {
  const child = fork(fileURLToPath(new URL('./keepalive-server.mjs', import.meta.url)), [], {
    stdio: 'inherit',
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { ports: number[] }).ports[0]!));
    child.once('error', reject);
  });
  return { origin: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

let failures = 0;

/**
 * Completed calls per second with `concurrency` in flight for `ms`, and the client process's CPU time
 * per call in µs (the server runs in another process). A failed call is counted apart.
 */
async function drive(
  client: Client,
  concurrency: number,
  ms: number,
): Promise<{ rps: number; cpuUs: number }> {
  let done = 0;
  const until = performance.now() + ms;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      try {
        await client.call();
        done++;
      } catch {
        failures++;
      }
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpu);
  return {
    rps: done / ((performance.now() - started) / 1000),
    cpuUs: (used.user + used.system) / Math.max(1, done),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const server = await startServer();
  const results = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const cpu = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  try {
    for (const c of contenders) {
      const client = c.create(server.origin, args.concurrency);
      await drive(client, args.concurrency, 500); // warm-up: JIT, connections
      await client.close();
    }
    for (let round = 0; round < args.rounds; round++) {
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        (globalThis as { gc?: () => void }).gc?.();
        const client = c.create(server.origin, args.concurrency);
        const { rps, cpuUs } = await drive(client, args.concurrency, args.seconds * 1000);
        await client.close();
        results.get(c.name)!.push(rps);
        cpu.get(c.name)!.push(cpuUs);
      }
    }
  } finally {
    server.stop();
  }
  const bare = median(results.get('undici Pool.request')!);
  const off = median(results.get('prazo, metrics off')!);
  const bareCpu = median(cpu.get('undici Pool.request')!);
  const offCpu = median(cpu.get('prazo, metrics off')!);
  console.log(
    `\n${args.rounds} rounds × ${args.seconds} s, ${args.concurrency} in flight, Node ${process.version}, ${failures} failed calls\n`,
  );
  console.log(
    '| client | req/s (median) | req/s ÷ undici | req/s ÷ metrics off | client CPU µs/call (median) | CPU: undici ÷ client | CPU: metrics off ÷ client | req/s per round |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const [name, xs] of results) {
    const m = median(xs);
    const c = median(cpu.get(name)!);
    console.log(
      `| ${name} | ${Math.round(m)} | ${(m / bare).toFixed(3)} | ${(m / off).toFixed(3)} | ${c.toFixed(1)} | ${(bareCpu / c).toFixed(3)} | ${(offCpu / c).toFixed(3)} | ${xs.map((x) => Math.round(x)).join(' / ')} |`,
    );
  }
}

await main();
