/**
 * node:http clients under `install({ nodeHttp: true })`: the client CPU per call and requests/s of
 * axios (default adapter), got and bare `http.request`, each three ways in the same run —
 *   plain         no prazo installed (a keep-alive `http.Agent`, `maxSockets` = concurrency);
 *   governed      the origin is a dependency's: each call is a prazo call on the installed dispatcher;
 *   not governed  prazo installed with a dependency elsewhere: the call goes to Node's function.
 * Each round of each contender runs in a fresh client process (its JIT feedback and heap its own,
 * as a service has them), after an unmeasured warm-up; rounds alternate the contenders; C calls in
 * flight; a keep-alive node:http server in a child process (client on CPU 0, server on CPU 1 where
 * `taskset` allows). prazo is the built package.
 *
 * `--interleaved`: instead, one fresh client process per client in which the three modes take turns
 * in short blocks (`--block-ms`, 300 by default; `--rounds` cycles of the three, the order rotating),
 * prazo installed and uninstalled between blocks: each mode runs with the same JIT state and in the
 * same second of a noisy machine as the others, which resolves differences of a few percent that
 * separate processes minutes apart do not. The ratios are paired cycle by cycle.
 *
 * A last table isolates what the not-governed rows pay for: the routing check alone (is this
 * origin governed?), in ns per call, for the arguments each client hands `http.request`, next to
 * the plain call's client CPU from the same run.
 *
 *   npm run build && flock /tmp/prazo-heavy.lock node --expose-gc --import tsx bench/node-http.bench.ts \
 *     [--rounds 5] [--seconds 2] [--concurrency 32] [--only axios,got] [--interleaved [--block-ms 300]]
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import axios from 'axios';
import got from 'got';
import { originTable, routeOf } from '../src/client/node-http/route.js';
import {
  type BenchClient,
  drive,
  importBuilt,
  median,
  parseLoadArgs,
  type RoundResult,
  startBenchServer,
} from './support/load.js';

const { install, uninstall } = await importBuilt<typeof import('../src/index.js')>('index');

type Mode = 'plain' | 'governed' | 'not governed';
type Make = (origin: string, agent: http.Agent) => BenchClient;

const clients: Record<string, Make> = {
  axios(origin, agent) {
    const client = axios.create({ baseURL: origin, httpAgent: agent, responseType: 'text' });
    return { call: () => client.get('/').then(() => {}), close: async () => {} };
  },
  got(origin, agent) {
    const client = got.extend({ prefixUrl: origin, agent: { http: agent }, retry: { limit: 0 } });
    return {
      call: () =>
        client
          .get('')
          .text()
          .then(() => {}),
      close: async () => {},
    };
  },
  'http.request'(origin, agent) {
    const { hostname, port } = new URL(origin);
    const options = { hostname, port, path: '/', method: 'GET', agent };
    return {
      call: () =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(options, (res) => {
            res.on('data', () => {});
            res.on('end', resolve);
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end();
        }),
      close: async () => {},
    };
  },
};

const args = parseLoadArgs(process.argv.slice(2), { rounds: 5, seconds: 2 });
const modes: Mode[] = ['plain', 'governed', 'not governed'];

function dependencyOn(target: string) {
  return { name: 'bench', origins: [target], latency: { p99Ms: 1_000 }, userDeadlineMs: 5_000 };
}

/** In a client process: one contender, warmed up, then measured. */
async function child(name: string, mode: Mode, origin: string, elsewhere: string): Promise<void> {
  if (mode !== 'plain')
    install({ dependencies: [dependencyOn(mode === 'governed' ? origin : elsewhere)], nodeHttp: true });
  const agent = new http.Agent({ keepAlive: true, maxSockets: args.concurrency });
  const client = clients[name]!(origin, agent);
  await drive(client, args.concurrency, 500);
  globalThis.gc?.();
  const result = await drive(client, args.concurrency, args.seconds * 1_000);
  await client.close();
  agent.destroy();
  if (mode !== 'plain') await uninstall();
  process.send!(result, () => process.exit(0));
}

/** In a client process: the three modes of one client, taking turns in short blocks. */
async function interleavedChild(name: string, origin: string, elsewhere: string): Promise<void> {
  const blockMs = Number(process.argv[process.argv.indexOf('--block-ms') + 1]) || 300;
  const agent = new http.Agent({ keepAlive: true, maxSockets: args.concurrency });
  const client = clients[name]!(origin, agent);
  const enter = (mode: Mode) => {
    if (mode !== 'plain')
      install({ dependencies: [dependencyOn(mode === 'governed' ? origin : elsewhere)], nodeHttp: true });
  };
  const leave = (mode: Mode) => (mode === 'plain' ? Promise.resolve() : uninstall());
  // Warm-up: every mode, unmeasured.
  for (const mode of modes) {
    enter(mode);
    await drive(client, args.concurrency, 500);
    await leave(mode);
  }
  const cycles: Record<Mode, RoundResult>[] = [];
  for (let c = 0; c < args.rounds; c++) {
    const order = [...modes.slice(c % 3), ...modes.slice(0, c % 3)];
    const cycle = {} as Record<Mode, RoundResult>;
    for (const mode of order) {
      enter(mode);
      cycle[mode] = await drive(client, args.concurrency, blockMs);
      await leave(mode);
    }
    cycles.push(cycle);
  }
  await client.close();
  agent.destroy();
  process.send!(cycles, () => process.exit(0));
}

const interleavedAt = process.argv.indexOf('--child-interleaved');
const childAt = process.argv.indexOf('--child');
if (interleavedAt !== -1) {
  const [name, origin, elsewhere] = process.argv.slice(interleavedAt + 1, interleavedAt + 4) as [
    string,
    string,
    string,
  ];
  await interleavedChild(name, origin, elsewhere);
} else if (childAt !== -1) {
  const [name, mode, origin, elsewhere] = process.argv.slice(childAt + 1, childAt + 5) as [
    string,
    Mode,
    string,
    string,
  ];
  await child(name, mode, origin, elsewhere);
} else {
  await parent();
}

async function parent(): Promise<void> {
  const server = await startBenchServer(args.server, args.pin);
  const [origin, elsewhere] = server.origins;
  const names = Object.keys(clients).filter(
    (n) => args.only === undefined || args.only.some((o) => n.startsWith(o)),
  );
  const results = new Map<string, { cpuPerCall: number[]; rps: number[]; errors: number }>();
  const record = (key: string, result: RoundResult) => {
    const entry = results.get(key) ?? { cpuPerCall: [], rps: [], errors: 0 };
    entry.cpuPerCall.push(result.cpuUs / Math.max(1, result.count));
    entry.rps.push((result.count / result.elapsedMs) * 1_000);
    entry.errors += result.errors;
    results.set(key, entry);
  };
  const interleaved = process.argv.includes('--interleaved');
  if (interleaved)
    for (const name of names) {
      const cycles = await new Promise<Record<Mode, RoundResult>[]>((resolve, reject) => {
        const proc = fork(
          fileURLToPath(import.meta.url),
          [...process.argv.slice(2), '--child-interleaved', name, origin, elsewhere],
          { execArgv: process.execArgv, stdio: 'inherit' },
        );
        proc.once('message', (m) => resolve(m as Record<Mode, RoundResult>[]));
        proc.once('exit', (code) => reject(new Error(`${name}: exited with ${code}`)));
      });
      for (const cycle of cycles) for (const mode of modes) record(`${name} ${mode}`, cycle[mode]);
    }
  for (let r = 0; r < (interleaved ? 0 : args.rounds); r++) {
    for (const name of names) {
      // Alternate the order of the modes from round to round.
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const mode of order) {
        const result = await new Promise<RoundResult>((resolve, reject) => {
          const proc = fork(
            fileURLToPath(import.meta.url),
            [...process.argv.slice(2), '--child', name, mode, origin, elsewhere],
            { execArgv: process.execArgv, stdio: 'inherit' },
          );
          proc.once('message', (m) => resolve(m as RoundResult));
          proc.once('exit', (code) => reject(new Error(`${name} ${mode}: exited with ${code}`)));
        });
        record(`${name} ${mode}`, result);
      }
    }
  }
  server.stop();
  const checkNs = routingCheckNs(origin, elsewhere);

  console.log(
    `C = ${args.concurrency}, ${
      interleaved
        ? `${args.rounds} cycles of the three modes in turn, blocks of ${Number(process.argv[process.argv.indexOf('--block-ms') + 1]) || 300} ms, one fresh client process per client`
        : `${args.rounds} rounds × ${args.seconds} s per contender, alternating, each round in a fresh client process`
    }; ${server.pinned ? 'client on CPU 0, server on CPU 1' : 'not pinned'}; Node ${process.version}\n`,
  );
  console.log(
    '| client | mode | client CPU µs/call | req/s | CPU ÷ plain (paired) | req/s ÷ plain (paired) | errors |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const name of names) {
    const plain = results.get(`${name} plain`)!;
    for (const mode of modes) {
      const e = results.get(`${name} ${mode}`)!;
      // Ratios paired round by round (or cycle by cycle), then their median.
      const cpuRatio = median(e.cpuPerCall.map((v, i) => v / plain.cpuPerCall[i]!));
      const rpsRatio = median(e.rps.map((v, i) => v / plain.rps[i]!));
      console.log(
        `| ${name} | ${mode} | ${median(e.cpuPerCall).toFixed(1)} | ${median(e.rps).toFixed(0)} | ${cpuRatio.toFixed(3)} | ${rpsRatio.toFixed(3)} | ${e.errors} |`,
      );
    }
  }

  console.log('\n| client | routing check of a not-governed call, ns | ÷ plain client CPU per call |');
  console.log('| --- | ---: | ---: |');
  for (const name of names) {
    const plainCpuUs = median(results.get(`${name} plain`)!.cpuPerCall);
    const ns = checkNs[name]!;
    console.log(`| ${name} | ${ns.toFixed(0)} | ${(1 + ns / 1_000 / plainCpuUs).toFixed(4)} |`);
  }
}

/**
 * The routing check alone, with the arguments each client hands `http.request` (axios through
 * follow-redirects: one options object; got: a URL and options; `http.request`: options), for a
 * table governing another origin: ns per call, the median of 5 runs of 200 000 calls.
 */
function routingCheckNs(origin: string, elsewhere: string): Record<string, number> {
  const table = originTable([elsewhere]);
  const url = new URL(`${origin}/`);
  const agent = new http.Agent({ keepAlive: true });
  const headers = {
    Accept: 'application/json, text/plain, */*',
    'User-Agent': 'axios/1',
    'Accept-Encoding': 'gzip',
  };
  const shapes: Record<string, [unknown, unknown, unknown]> = {
    axios: [
      {
        maxRedirects: 21,
        maxBodyLength: Number.POSITIVE_INFINITY,
        protocol: 'http:',
        path: '/',
        method: 'GET',
        headers,
        agents: {},
        auth: undefined,
        family: undefined,
        beforeRedirect: () => {},
        hostname: url.hostname,
        port: url.port,
        agent,
        nativeProtocols: {},
      },
      () => {},
      undefined,
    ],
    got: [url, { method: 'GET', headers, agent, timeout: undefined, signal: undefined }, undefined],
    'http.request': [
      { hostname: url.hostname, port: url.port, path: '/', method: 'GET', agent },
      () => {},
      undefined,
    ],
  };
  const out: Record<string, number> = {};
  for (const [name, [a, b, c]] of Object.entries(shapes)) {
    const runs: number[] = [];
    let sink = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < 200_000; i++) if (routeOf(table, 'http:', a, b, c) === undefined) sink++;
      runs.push(Number(process.hrtime.bigint() - t0) / 200_000);
    }
    if (sink === 0) throw new Error('the check governed a call to another origin');
    out[name] = median(runs);
  }
  agent.destroy();
  return out;
}
