/**
 * Client benchmark: requests/s and latency of prazo's dependency() against bare undici and the
 * usual peers, same run, alternating rounds, C requests in flight, a keep-alive server in a child
 * process on 127.0.0.1 (node:http by default; `--server raw` for a minimal responder on node:net
 * that lets the client, not the server, set the pace). prazo is the built package (`dist/`, what
 * users run): build first.
 *
 * When `taskset` exists and there are two CPUs or more, the client runs on CPU 0 and the server on
 * CPU 1, so that neither steals the other's core (`--no-pin` to let the scheduler place them).
 *
 *   npm run build && node --expose-gc --import tsx bench/client.bench.ts \
 *     [--rounds 6] [--seconds 3] [--concurrency 32] [--only a,b] [--server http|raw] [--no-pin] \
 *     [--undici DIR] [--isolate]
 *
 * `--isolate`: each contender runs in a client process of its own (forked with the same flags, on
 * the same CPU), driven round by round from this one, still alternating. In one shared process a
 * contender runs with the JIT feedback, the heap and the young-generation size the others left:
 * undici 8's `request()` keeps finished requests reachable, its young generation grows to copy
 * them, and the contender after it pays for that too. A service runs one of them, not all in turn.
 *
 * `--undici DIR`: the `Agent` of the entry-point rows (`undici Agent.request`, the interceptor over
 * it, and the dispatcher `install()` composes onto) comes from the undici installed under `DIR`
 * (`npm install --prefix DIR undici@8` …) instead of prazo's own copy: the interceptor on undici 8.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import axios from 'axios';
import { handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
import got from 'got';
import { Agent, Pool, fetch as undiciFetch } from 'undici';
import { type HistogramJson, LatencyHistogram } from '../src/latency/histogram.js';
import {
  type BenchClient,
  benchDependencyOptions,
  drive,
  importBuilt,
  median,
  parseLoadArgs,
  type RoundResult,
  startBenchServer,
} from './support/load.js';

const SELF = fileURLToPath(import.meta.url);

const { dependency, install, prazoInterceptor, uninstall } =
  await importBuilt<typeof import('../src/index.js')>('index');

const undiciDir = process.argv.indexOf('--undici');
/** The `Agent` class of the entry-point rows: prazo's undici, or the copy under `--undici DIR`. */
const EntryAgent: typeof Agent =
  undiciDir === -1
    ? Agent
    : ((
        (await import(
          pathToFileURL(join(process.argv[undiciDir + 1]!, 'node_modules', 'undici', 'index.js')).href
        )) as { Agent: typeof Agent }
      ).Agent as typeof Agent);

type Client = BenchClient;
// biome-ignore lint/suspicious/noExplicitAny: undici 7's or 8's dispatch, whichever --undici loads
type Dispatch = (opts: any, handler: any) => boolean;
type DispatchOpts = { origin?: unknown; method: string; path: string; body?: unknown };

type Contender = {
  name: string;
  create(origin: string, connections: number, second: string, third: string): Client;
};

const contenders: Contender[] = [
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
    // The floor: undici's lowest-level API, a handler that only collects the body. No abort
    // handle, no timeout, no body stream. What prazo's own transport is built on.
    name: 'undici Pool.dispatch (bare handler)',
    create(origin, connections) {
      const pool = new Pool(origin, { connections });
      return {
        call: () =>
          new Promise<void>((resolve, reject) => {
            const chunks: Buffer[] = [];
            pool.dispatch(
              { path: '/', method: 'GET' },
              {
                onConnect() {},
                onHeaders: () => true,
                onData(chunk: Buffer) {
                  chunks.push(chunk);
                  return true;
                },
                onComplete() {
                  Buffer.concat(chunks).toString();
                  resolve();
                },
                onError: reject,
              },
            );
          }),
        close: () => pool.close(),
      };
    },
  },
  {
    // The same single origin as every other contender: hedging is configured but has no other
    // instance to send a copy to, so it never fires.
    name: 'prazo (all features, 1 instance)',
    create: (origin, connections) => prazo('prazo (all features, 1 instance)', [origin], connections),
  },
  {
    // The same, with both overload protections on at their defaults: the adaptive concurrency
    // limit (a slot per call, the gradient fed on every answer) and adaptive throttling (a
    // sliding-window count per call). The healthy path: the limit must not cut throughput.
    name: 'prazo (all features + overload protections, 1 instance)',
    create: (origin, connections) =>
      prazo('prazo (all features + overload protections, 1 instance)', [origin], connections, true, true),
  },
  {
    // The same protections with the limit's floor (and start) above the calls in flight, so that no
    // call ever waits for a slot and the limit never binds: what is left against the plain row is
    // the protections' own cost per call (the slot, the limit's sample, the throttle's check and
    // count), without the limit's learning from `minLimit` and `initialLimit` that the row above
    // pays with a new dependency every round.
    name: 'prazo (all features + overload protections, limit above the calls in flight, 1 instance)',
    create: (origin, connections) =>
      prazo(
        'prazo (all features + overload protections, limit above the calls in flight, 1 instance)',
        [origin],
        connections,
        true,
        { minLimit: 64, initialLimit: 64 },
      ),
  },
  {
    // The two rows above with their dependency created once and kept from round to round, as a
    // service keeps it: every other contender starts each round with a new client, and the
    // concurrency limit of a new dependency first measures the no-load latency at `minLimit` (4)
    // and then starts at `initialLimit` (20), below the 32 calls in flight here, growing by about
    // √limit × smoothing a window — most of a 2 s round. Kept, the limit has learnt (it sits above
    // the calls in flight) and what is left is the protections' own cost per call.
    name: 'prazo (all features, 1 instance, kept across rounds)',
    create: kept((origin, connections) =>
      prazo('prazo (all features, 1 instance, kept across rounds)', [origin], connections),
    ),
  },
  {
    name: 'prazo (all features + overload protections, 1 instance, kept across rounds)',
    create: kept((origin, connections) =>
      prazo(
        'prazo (all features + overload protections, 1 instance, kept across rounds)',
        [origin],
        connections,
        true,
        true,
      ),
    ),
  },
  {
    // Two instances, hedging off: what the topology alone costs (twice the pools and connections),
    // to read the next row against.
    name: 'prazo (2 instances, hedging off)',
    create: (origin, connections, second) =>
      prazo('prazo (2 instances, hedging off)', [origin, second], connections, false),
  },
  {
    // Three instances, hedging off: the balancer's choice on every attempt (two random choices
    // over peak-EWMA × in flight), three times the pools.
    name: 'prazo (3 instances, hedging off)',
    create: (origin, connections, second, third) =>
      prazo('prazo (3 instances, hedging off)', [origin, second, third], connections, false),
  },
  {
    // Two instances (two ports of the same server process): hedges fire at the live p95. Not the
    // same topology as the other rows (twice the pools and connections), shown for its cost.
    name: 'prazo (all features, 2 instances, hedging fires)',
    create: (origin, connections, second) =>
      prazo('prazo (all features, 2 instances, hedging fires)', [origin, second], connections),
  },
  {
    // The Fetch API rows: undici's fetch on an Agent, prazo's fetch facade (same policy as the
    // prazo rows, one instance), Node's global fetch alone and after install().
    name: 'undici fetch (Agent)',
    create(_origin, connections) {
      const agent = new Agent({ connections });
      return {
        async call() {
          await (await undiciFetch(`${_origin}/`, { dispatcher: agent })).text();
        },
        close: () => agent.close(),
      };
    },
  },
  {
    name: 'prazo dep.fetch (all features, 1 instance)',
    create(origin, connections) {
      const dep = dependency(benchDependencyOptions([origin], connections, true));
      return {
        async call() {
          await (await dep.fetch('/')).text();
        },
        close: () => dep.close(),
      };
    },
  },
  {
    name: 'undici Agent.request',
    create(origin, connections) {
      const agent = new EntryAgent({ connections });
      return {
        async call() {
          const { body } = await agent.request({ origin, path: '/', method: 'GET' });
          await body.text();
        },
        close: () => agent.close(),
      };
    },
  },
  {
    // What composing costs before any policy: an interceptor that passes every request through as
    // it is (on undici 7 the handler is still wrapped from one API to the other and back).
    name: 'pass-through interceptor over Agent.request',
    create(origin, connections) {
      const agent = new EntryAgent({ connections });
      const composed = agent.compose(
        (dispatch: Dispatch) =>
          (opts: DispatchOpts, handler: unknown): boolean =>
            dispatch(opts, handler),
      );
      return {
        async call() {
          const { body } = await composed.request({ origin, path: '/', method: 'GET' });
          await body.text();
        },
        close: () => agent.close(),
      };
    },
  },
  {
    // The least an interceptor carrying a deadline does: the request rewritten into a literal of
    // fixed shape with prazo's two headers (deadline and attempt) and per-request timeouts, as prazo's
    // transport dispatches it — no policy, no engine.
    name: 'header-only interceptor over Agent.request',
    create(origin, connections) {
      const agent = new EntryAgent({ connections });
      const composed = agent.compose(
        (dispatch: Dispatch) =>
          (opts: DispatchOpts, handler: unknown): boolean =>
            dispatch(
              {
                origin: opts.origin,
                method: opts.method,
                path: opts.path,
                headers: [
                  'x-deadline-epoch-ms',
                  String(Date.now() + 2_000),
                  'x-prazo-attempt',
                  '1;kind=original',
                ],
                body: opts.body ?? null,
                headersTimeout: 280,
                bodyTimeout: 280,
              },
              handler,
            ),
      );
      return {
        async call() {
          const { body } = await composed.request({ origin, path: '/', method: 'GET' });
          await body.text();
        },
        close: () => agent.close(),
      };
    },
  },
  {
    name: 'prazo interceptor over Agent.request',
    create(origin, connections) {
      const agent = new EntryAgent({ connections });
      const interceptor = prazoInterceptor({
        dependencies: [benchDependencyOptions([origin], connections, true)],
      });
      const composed = agent.compose(interceptor);
      return {
        async call() {
          const { body } = await composed.request({ origin, path: '/', method: 'GET' });
          await body.text();
        },
        close: () => interceptor.close().then(() => agent.close()),
      };
    },
  },
  {
    name: 'global fetch',
    create(origin) {
      return {
        async call() {
          await (await fetch(`${origin}/`)).text();
        },
        close: async () => {},
      };
    },
  },
  {
    name: 'global fetch with install()',
    create(origin, connections) {
      install({ dependencies: [benchDependencyOptions([origin], connections, true)] });
      return {
        async call() {
          await (await fetch(`${origin}/`)).text();
        },
        close: () => uninstall(),
      };
    },
  },
  {
    name: 'cockatiel retry+timeout (undici)',
    create(origin, connections) {
      const pool = new Pool(origin, { connections });
      const policy = wrap(retry(handleAll, { maxAttempts: 1 }), timeout(1_000, TimeoutStrategy.Aggressive));
      return {
        call: () =>
          policy.execute(async ({ signal }) => {
            const { body } = await pool.request({ path: '/', method: 'GET', signal });
            await body.text();
          }),
        close: () => pool.close(),
      };
    },
  },
  {
    name: 'got (keep-alive agent)',
    create(origin, connections) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
      const client = got.extend({ prefixUrl: origin, agent: { http: agent } });
      return {
        async call() {
          await client.get('').text();
        },
        close: async () => agent.destroy(),
      };
    },
  },
  {
    name: 'axios (keep-alive agent)',
    create(origin, connections) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
      const client = axios.create({ baseURL: origin, httpAgent: agent, responseType: 'text' });
      return {
        async call() {
          await client.get('/');
        },
        close: async () => agent.destroy(),
      };
    },
  },
];

/** The clients of the contenders kept across rounds, closed once every round has run. */
const keptClients: Client[] = [];

/**
 * A contender whose client is created by its first round and kept for the next ones (its `close()`
 * after a round does nothing); {@link closeKept} closes it at the end.
 */
function kept(create: Contender['create']): Contender['create'] {
  let client: Client | undefined;
  return (...args) => {
    if (client === undefined) {
      const made = create(...args);
      keptClients.push(made);
      client = { call: () => made.call(), close: async () => {} };
    }
    return client;
  };
}

function closeKept(): Promise<unknown> {
  return Promise.all(keptClients.splice(0).map((client) => client.close()));
}

/** Errors by code, over every contender (the report names them). */
const errorCodes = new Map<string, number>();

/** Extra attempts prazo made in the measured rounds (hedges and retries), for the report. */
const prazoExtras = new Map<string, { calls: number; hedges: number; retries: number }>();

function prazo(
  key: string,
  origins: string[],
  connections: number,
  hedge = true,
  overload: boolean | { minLimit: number; initialLimit: number } = false,
): Client {
  const dep = dependency(benchDependencyOptions(origins, connections, hedge, overload));
  const tally = prazoExtras.get(key) ?? { calls: 0, hedges: 0, retries: 0 };
  prazoExtras.set(key, tally);
  dep.on('request-end', () => {
    tally.calls++;
  });
  dep.on('hedge', () => {
    tally.hedges++;
  });
  dep.on('retry', () => {
    tally.retries++;
  });
  return {
    async call() {
      const res = await dep.request({ path: '/' });
      await res.body.text();
    },
    close: () => dep.close(),
  };
}

function countError(error: unknown): void {
  const code = String((error as { code?: unknown }).code ?? (error as Error).name);
  errorCodes.set(code, (errorCodes.get(code) ?? 0) + 1);
}

async function main() {
  const args = parseLoadArgs(process.argv.slice(2), { rounds: 6, seconds: 3 });
  const selected = contenders.filter((c) => !args.only || args.only.some((o) => c.name.startsWith(o)));
  const server = await startBenchServer(args.server, args.pin);
  const pinned = server.pinned;
  const results = new Map(
    selected.map((c) => [
      c.name,
      {
        count: 0,
        errors: 0,
        ms: 0,
        cpuUs: 0,
        histogram: new LatencyHistogram(),
        perRound: [] as number[],
      },
    ]),
  );
  // Each contender runs in this process, or (`--isolate`) in a client process of its own.
  const runners = new Map(
    selected.map((c) => [
      c.name,
      isolate ? isolatedRunner(c.name, server.origins) : localRunner(c, server.origins),
    ]),
  );
  try {
    // Warm-up: JIT and connections for every contender.
    for (const c of selected) await runners.get(c.name)!.round(args.concurrency, 1_000, false);
    for (let r = 0; r < args.rounds; r++) {
      const order = r % 2 === 0 ? selected : [...selected].reverse();
      for (const c of order) {
        const res = results.get(c.name)!;
        const out = await runners.get(c.name)!.round(args.concurrency, args.seconds * 1000, true);
        res.count += out.count;
        res.errors += out.errors;
        res.ms += out.elapsedMs;
        res.cpuUs += out.cpuUs;
        res.perRound.push((out.count / out.elapsedMs) * 1000);
        process.stderr.write(
          `round ${r + 1} ${c.name}: ${Math.round((out.count / out.elapsedMs) * 1000)} req/s\n`,
        );
      }
    }
    for (const c of selected) results.get(c.name)!.histogram = await runners.get(c.name)!.finish();
  } finally {
    for (const runner of runners.values()) runner.kill();
    await closeKept();
    server.stop();
  }
  const base = results.get('undici Pool.request');
  const baseRps = base ? (base.count / base.ms) * 1000 : Number.NaN;
  const baseCpu = base ? base.cpuUs / base.count : Number.NaN;
  const lines = [
    `C = ${args.concurrency}, ${args.rounds} rounds × ${args.seconds} s per contender, alternating, ${isolate ? 'each contender in a client process of its own' : 'all contenders in one client process'}; ${args.server === 'raw' ? 'raw node:net' : 'node:http'} server; ${pinned ? 'client on CPU 0, server on CPU 1' : 'not pinned'}; Node ${process.version}`,
    '',
    '| client | req/s | ratio vs undici | median of round ratios | client CPU µs/req | CPU ratio (undici ÷ client) | p50 ms | p99 ms | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [name, res] of results) {
    const rps = (res.count / res.ms) * 1000;
    const [p50, p99] = res.histogram.percentiles([50, 99]);
    // Each round's rate over the undici round next to it: drift on the machine cancels out.
    const paired = base ? median(res.perRound.map((r, i) => r / base.perRound[i]!)) : Number.NaN;
    lines.push(
      `| ${name} | ${Math.round(rps)} | ${(rps / baseRps).toFixed(3)} | ${paired.toFixed(3)} | ${(res.cpuUs / res.count).toFixed(1)} | ${(baseCpu / (res.cpuUs / res.count)).toFixed(3)} | ${p50!.toFixed(2)} | ${p99!.toFixed(2)} | ${res.errors} |`,
    );
  }
  // Each entry point against its own peer, round by round (the two ran next to each other in every
  // round): what the entry-point targets compare.
  const pairs = [
    ['prazo interceptor over Agent.request', 'undici Agent.request'],
    ['pass-through interceptor over Agent.request', 'undici Agent.request'],
    ['header-only interceptor over Agent.request', 'undici Agent.request'],
    ['global fetch with install()', 'global fetch'],
    // The overload protections' cost: the same call with them and without (the issue's ≤ 5 %).
    ['prazo (all features + overload protections, 1 instance)', 'prazo (all features, 1 instance)'],
    [
      'prazo (all features + overload protections, limit above the calls in flight, 1 instance)',
      'prazo (all features, 1 instance)',
    ],
    [
      'prazo (all features + overload protections, 1 instance, kept across rounds)',
      'prazo (all features, 1 instance, kept across rounds)',
    ],
  ] as const;
  for (const [name, peer] of pairs) {
    const a = results.get(name);
    const b = results.get(peer);
    if (a === undefined || b === undefined) continue;
    const rounds = a.perRound.map((r, i) => r / b.perRound[i]!);
    lines.push(
      '',
      `${name} ÷ ${peer}: ${(a.count / a.ms / (b.count / b.ms)).toFixed(3)} overall, median of round ratios ${median(rounds).toFixed(3)} (${rounds.map((r) => r.toFixed(2)).join(' ')}), client CPU ratio (the peer's µs per request ÷ this one's) ${(b.cpuUs / b.count / (a.cpuUs / a.count)).toFixed(3)}`,
    );
  }
  for (const [name, t] of prazoExtras)
    lines.push(
      '',
      `${name}: ${t.hedges} hedges and ${t.retries} retries for ${t.calls} calls (${((100 * (t.hedges + t.retries)) / Math.max(1, t.calls)).toFixed(2)} % extra attempts, warm-up included)`,
    );
  if (errorCodes.size > 0)
    lines.push('', `errors by code: ${JSON.stringify(Object.fromEntries(errorCodes))}`);
  console.log(lines.join('\n'));
}

/** Runs a contender's rounds: here, or in a client process of its own. */
interface Runner {
  /** One round of `ms` (`measured`: its latencies count). The client is created for the round and closed after it. */
  round(concurrency: number, ms: number, measured: boolean): Promise<RoundResult>;
  /** The latencies of the measured rounds. */
  finish(): Promise<LatencyHistogram>;
  kill(): void;
}

const CONNECTIONS = 64;

function localRunner(c: Contender, origins: readonly string[]): Runner {
  const histogram = new LatencyHistogram();
  return {
    async round(concurrency, ms, measured) {
      globalThis.gc?.();
      const client = c.create(origins[0]!, CONNECTIONS, origins[1]!, origins[2]!);
      const out = await drive(
        client,
        concurrency,
        ms,
        measured ? (latencyMs) => histogram.record(latencyMs) : undefined,
        measured ? countError : undefined,
      );
      await client.close();
      return out;
    },
    finish: async () => histogram,
    kill() {},
  };
}

/** What a client process sends back at the end: its latencies, its errors and prazo's extra attempts. */
interface ChildReport {
  histogram: HistogramJson;
  errorCodes: [string, number][];
  prazoExtras: [string, { calls: number; hedges: number; retries: number }][];
}

/**
 * A contender in a client process of its own (same flags, same CPU as this one): its JIT feedback,
 * its heap and the size its young generation grew to are its own, as in a service that runs one
 * client, instead of being shaped by the contenders that ran before it in the same process.
 */
function isolatedRunner(name: string, origins: readonly string[]): Runner {
  const childArgs = ['--child', name, '--origins', origins.join(',')];
  if (undiciDir !== -1) childArgs.push('--undici', process.argv[undiciDir + 1]!);
  const child = fork(SELF, childArgs, { execArgv: process.execArgv, stdio: 'inherit' });
  let pending: ((message: unknown) => void) | null = null;
  let failed: Error | null = null;
  child.on('message', (message) => {
    const settle = pending;
    pending = null;
    settle?.(message);
  });
  child.once('exit', (code) => {
    failed = new Error(`${name}: the client process exited with ${code}`);
    pending?.(undefined);
  });
  const ask = <T>(message: object): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failed !== null) return reject(failed);
      pending = (answer) => (answer === undefined ? reject(failed) : resolve(answer as T));
      child.send(message);
    });
  return {
    round: (concurrency, ms, measured) => ask<RoundResult>({ type: 'round', concurrency, ms, measured }),
    async finish() {
      const report = await ask<ChildReport>({ type: 'finish' });
      for (const [code, n] of report.errorCodes) errorCodes.set(code, (errorCodes.get(code) ?? 0) + n);
      for (const [key, tally] of report.prazoExtras) prazoExtras.set(key, tally);
      return LatencyHistogram.fromJSON(report.histogram);
    },
    kill() {
      if (child.exitCode === null) child.kill();
    },
  };
}

/** In a client process (`--child NAME`): runs the rounds the parent asks for, one at a time. */
function serveRounds(name: string): void {
  const contender = contenders.find((c) => c.name === name);
  if (contender === undefined) throw new Error(`no contender named ${name}`);
  const origins = String(process.argv[process.argv.indexOf('--origins') + 1]).split(',');
  const runner = localRunner(contender, origins);
  process.on('message', (message: { type: string; concurrency: number; ms: number; measured: boolean }) => {
    if (message.type === 'round')
      void runner.round(message.concurrency, message.ms, message.measured).then((out) => process.send!(out));
    else
      void Promise.all([runner.finish(), closeKept()]).then(([histogram]) => {
        const report: ChildReport = {
          histogram: histogram.toJSON(),
          errorCodes: [...errorCodes],
          prazoExtras: [...prazoExtras],
        };
        process.send!(report, () => process.disconnect());
      });
  });
}

const isolate = process.argv.includes('--isolate');
const childIndex = process.argv.indexOf('--child');
if (childIndex === -1) await main();
else serveRounds(process.argv[childIndex + 1]!);
