/**
 * What the server idempotency layer adds to a `node:http` handler behind `withDeadlineHandler`: the
 * same keyed `POST /orders` (a small JSON body, a fresh `Idempotency-Key` per request, as a client
 * minting keys sends it) served by the adapter alone, and by the adapter with `createIdempotency()`
 * on its default in-memory store (claim, body digest, response capture, completion), and on a store
 * held to 100 records; two parts of the layer alone (the capture's pass-through wrappers; a record
 * per request held in the store); then the same POST without a key, against the adapter alone and with the
 * layer (which lets it through); last the adapter again in a second process, the ratio of two identical
 * servers in the same run. CPU per request is printed whole (user + system) and its user part: the
 * system part is mostly the socket writes, whose time on loopback moves with the client's state. The harness is bench/support/server-cpu.ts: one child process per
 * server (pinned to CPU 1 when `taskset` is there) running the built package (`npm run build`
 * first), the closed-loop undici client here (CPU 0), the server's CPU time per request (`process.cpuUsage()` around each measurement); rounds alternate the
 * order; medians of the rounds, and each layer's median as a ratio to the adapter's under the same
 * requests. Then the layer's parts without HTTP, in this process: the in-memory store's claim and
 * completion with 10 000 records held, the body's fingerprint, SHA-256 of a body. Last, what minting
 * a key costs: `crypto.randomUUID()` against a time-ordered UUIDv7 built from `Date.now()` and random
 * bytes.
 *
 * Ratios are given two ways: the ratio of the medians, and the median of the per-round ratios — each
 * round's figure against the adapter's in the same round, measured seconds apart, so that a change of
 * the machine's load between rounds cancels — and, for the layer, against both adapter processes (the
 * mean of the adapter and its twin in the round), so that the bias of one process (up to ±5 % between
 * two identical servers here) weighs half. `--focus` serves only the keyed adapter, the layer and the
 * twin: shorter rounds, the three measured closer together. `--one-process` serves the keyed adapter
 * and the layer from **one** server process on two ports, loaded in turn: no process's bias between
 * them (the records the layer holds live in the adapter's heap too; with the in-memory store's
 * records in a byte slab, the collector has little of theirs to see).
 *
 *   node --import tsx bench/idempotency.bench.ts [--rounds 7] [--seconds 2] [--concurrency 32] [--no-pin]
 *     [--keys 1000000] [--prof-dir DIR] [--server-flag --trace-gc] [--focus] [--one-process]
 *   (--prof-dir: a CPU profile of each server process, written when it exits; --server-flag: a Node
 *   flag for every server process, repeatable)
 */
import { createHash, getRandomValues, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { importBuilt } from './support/load.js';
import {
  compareServers,
  describeRun,
  median,
  parseServerBenchArgs,
  serveAllArgs,
  serveArgs,
  serveForBench,
} from './support/server-cpu.js';

const SERVERS = [
  'adapter',
  'adapter + idempotency (memory)',
  'adapter + idempotency (memory, 100 records)',
  // Two parts of the layer alone, to locate its cost: the response's writeHead/write/end replaced by
  // pass-through wrappers as the capture installs them, and a record per request held in the
  // in-memory store (claim, then complete with a stored response) by the handler itself.
  'adapter + pass-through wrappers only',
  'adapter + store records only',
  // The adapter again in a process of its own: what the ratio of two identical servers is in this
  // run (the noise of the machine and of the order of the servers; the first measured ≈ 10 % above
  // its twin in the runs of 2026-12-05 00:36–01:02).
  'adapter, second process',
] as const;
type Server = (typeof SERVERS)[number];
/** Each server with the request it is loaded with: a keyed POST, or the same POST without a key. */
const VARIANTS: readonly (readonly [Server, 'key' | 'no key'])[] = [
  ['adapter', 'key'],
  ['adapter + idempotency (memory)', 'key'],
  ['adapter + idempotency (memory, 100 records)', 'key'],
  ['adapter + pass-through wrappers only', 'key'],
  ['adapter + store records only', 'key'],
  ['adapter', 'no key'],
  ['adapter + idempotency (memory)', 'no key'],
  ['adapter, second process', 'key'],
];
const BODY = '{"item":42,"quantity":2}';

const WRAPPED = Symbol('wrapped');
const proto = ServerResponse.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
function passWriteHead(this: ServerResponse, ...args: unknown[]): unknown {
  return proto.writeHead!.apply(this, args);
}
function passWrite(this: ServerResponse, ...args: unknown[]): unknown {
  return proto.write!.apply(this, args);
}
function passEnd(this: ServerResponse, ...args: unknown[]): unknown {
  return proto.end!.apply(this, args);
}

async function serve(server: Server): Promise<number> {
  // The built package, what users run: the source through a TypeScript loader carries its helpers
  // (a `__name(fn, …)` call, a defineProperty, for every function expression) on the hot path.
  const { createIdempotency, createMemoryIdempotencyStore, withDeadlineHandler } =
    await importBuilt<typeof import('../src/server/http.js')>('http');
  const options = { defaultMs: 1000, maxMs: 5000 };
  const records = server === 'adapter + store records only' ? createMemoryIdempotencyStore() : null;
  const stored = { status: 201, headers: { 'content-type': 'application/json' }, body: new Uint8Array(12) };
  const listener = withDeadlineHandler(
    async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const payload = JSON.stringify({ order: body.length });
      if (records !== null) {
        const key = String(req.headers['idempotency-key']);
        records.claim(key, 'owner', 'POST /orders', 31_000);
        records.complete(key, 'owner', `POST /orders =${body}`, stored, 31_000);
      }
      res.writeHead(201, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      });
      res.end(payload);
    },
    server !== 'adapter + idempotency (memory)' && server !== 'adapter + idempotency (memory, 100 records)'
      ? options
      : {
          ...options,
          idempotency: createIdempotency(
            server === 'adapter + idempotency (memory)'
              ? {}
              : { store: createMemoryIdempotencyStore({ maxEntries: 100 }) },
          ),
        },
  );
  const http = createServer(
    server === 'adapter + pass-through wrappers only'
      ? (req, res) => {
          const methods = res as unknown as Record<string | symbol, unknown>;
          methods[WRAPPED] = res;
          methods.writeHead = passWriteHead;
          methods.write = passWrite;
          methods.end = passEnd;
          return listener(req, res);
        }
      : listener,
  );
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return (http.address() as AddressInfo).port;
}

const served = serveArgs(process.argv);
const servedAll = serveAllArgs(process.argv);
if (served !== undefined) serveForBench(await serve(served[0] as Server));
else if (servedAll !== undefined) {
  const ports: number[] = [];
  for (const [server] of servedAll) ports.push(await serve(server as Server));
  serveForBench(ports);
} else {
  const args = parseServerBenchArgs(process.argv);
  const arg = (name: string, fallback: number): number => {
    const at = process.argv.indexOf(name);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  const focus = process.argv.includes('--focus');
  const oneProcess = process.argv.includes('--one-process');
  /** The keyed POST against `servers` only. */
  const keyedOn = (...servers: Server[]) =>
    VARIANTS.filter(([server, key]) => key === 'key' && servers.includes(server));
  const variants = oneProcess
    ? keyedOn('adapter', 'adapter + idempotency (memory)', 'adapter + idempotency (memory, 100 records)')
    : focus
      ? keyedOn('adapter', 'adapter + idempotency (memory)', 'adapter, second process')
      : VARIANTS;
  const { runs, pinned } = await compareServers(
    fileURLToPath(import.meta.url),
    variants,
    (sequence, [, key]) => ({
      path: '/orders',
      method: 'POST',
      body: BODY,
      headers:
        key === 'key'
          ? ['content-type', 'application/json', 'idempotency-key', `"bench-${sequence}"`]
          : ['content-type', 'application/json'],
    }),
    201,
    args,
    { oneProcess },
  );
  console.log(`${describeRun(args, pinned)}\n`);
  console.log(
    '| server | request | req/s (median) | server CPU µs per request (median) | CPU against the adapter alone | the same, median of per-round ratios | user CPU µs (median) | user CPU against the adapter alone | the same, median of per-round ratios |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  /** Each round's value of `run` against the same round's of `peers` (their mean), then the median. */
  const perRound = (values: number[], peers: number[][]): string =>
    `${median(values.map((v, r) => v / (peers.reduce((sum, p) => sum + p[r]!, 0) / peers.length))).toFixed(3)}×`;
  for (const run of runs) {
    const [server, key] = run.variant;
    const peer = runs.find((r) => r.variant[0] === 'adapter' && r.variant[1] === key)!;
    const us = median(run.cpuUs);
    const user = median(run.userUs);
    const [ratio, paired, userRatio, userPaired] =
      server === 'adapter'
        ? ['', '', '', '']
        : [
            `${(us / median(peer.cpuUs)).toFixed(3)}×`,
            perRound(run.cpuUs, [peer.cpuUs]),
            `${(user / median(peer.userUs)).toFixed(3)}×`,
            perRound(run.userUs, [peer.userUs]),
          ];
    console.log(
      `| ${server} | ${key} | ${median(run.rates).toFixed(0)} | ${us.toFixed(1)} | ${ratio} | ${paired} | ${user.toFixed(1)} | ${userRatio} | ${userPaired} |`,
    );
  }
  // The layer against both adapter processes: the bias of one process weighs half.
  const twin = runs.find((r) => r.variant[0] === 'adapter, second process');
  const layer = runs.find((r) => r.variant[0] === 'adapter + idempotency (memory)' && r.variant[1] === 'key');
  const adapter = runs.find((r) => r.variant[0] === 'adapter' && r.variant[1] === 'key');
  if (twin !== undefined && layer !== undefined && adapter !== undefined)
    console.log(
      `\nkeyed POST through the layer against both adapter processes (per round against their mean, median of the rounds): CPU ${perRound(layer.cpuUs, [adapter.cpuUs, twin.cpuUs])}, user CPU ${perRound(layer.userUs, [adapter.userUs, twin.userUs])}`,
    );
  if (oneProcess && layer !== undefined && adapter !== undefined)
    console.log(
      `\nkeyed POST through the layer against the adapter, both in one server process (per round, median of the rounds): CPU ${perRound(layer.cpuUs, [adapter.cpuUs])}, user CPU ${perRound(layer.userUs, [adapter.userUs])}; µs added (medians) ${(median(layer.cpuUs) - median(adapter.cpuUs)).toFixed(1)}`,
    );
  if (focus || oneProcess) process.exit(0);

  // The layer's parts without HTTP, in this process: what a keyed request cannot do without.
  const { createMemoryIdempotencyStore } = await importBuilt<typeof import('../src/server/http.js')>('http');
  const partRounds = (run: (n: number) => number, n: number): number => {
    const samples: number[] = [];
    let sink = 0;
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      sink += run(n);
      samples.push(((performance.now() - t0) * 1e6) / n);
    }
    if (sink === -1) console.log('');
    return median(samples);
  };
  const store = createMemoryIdempotencyStore();
  const response = {
    status: 201,
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(12),
  };
  let sequence = 0;
  const storeOps = (n: number): number => {
    for (let i = 0; i < n; i++) {
      // The bench's lifetime: the adapter's default 1 s deadline plus the 30 s grace.
      const key = `"bench-${sequence++}"`;
      store.claim(key, 'owner', 'POST /orders', 31_000);
      store.complete(key, 'owner', 'POST /orders =body', response, 31_000);
    }
    return store.size().entries;
  };
  const small = Buffer.from(BODY);
  const kib = Buffer.alloc(1024, 'x');
  const inline = (n: number): number => {
    let length = 0;
    for (let i = 0; i < n; i++) length += `=${small.toString('base64')}`.length;
    return length;
  };
  const sha = (body: Buffer) => (n: number) => {
    let length = 0;
    for (let i = 0; i < n; i++) length += createHash('sha256').update(body).digest('base64url').length;
    return length;
  };
  storeOps(20_000); // the store full and warm
  console.log('\n| part, without HTTP (this process) | ns per request (median of 5) |\n| --- | ---: |');
  for (const [name, run] of [
    ['memory store: claim + complete, 10 000 records held (31 s lifetime)', storeOps],
    [`body fingerprint, ${small.length} B (its own bytes, base64)`, inline],
    [`SHA-256 of a ${small.length} B body`, sha(small)],
    ['SHA-256 of a 1 KiB body', sha(kib)],
  ] as const) {
    console.log(`| ${name} | ${partRounds(run, 100_000).toFixed(0)} |`);
  }

  // Minting one key per call: random (what prazo sends) against time-ordered.
  const bytes = new Uint8Array(10);
  const hex = (n: number) => n.toString(16).padStart(2, '0');
  const uuidV7 = (): string => {
    const ms = Date.now();
    getRandomValues(bytes);
    const t = ms.toString(16).padStart(12, '0');
    const r = Array.from(bytes, hex).join('');
    return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(0, 3)}-${((bytes[2]! & 0x3f) | 0x80).toString(16)}${r.slice(6, 8)}-${r.slice(8, 20)}`;
  };
  const N = arg('--keys', 1_000_000);
  console.log('\n| key | ns per key (median of 5) |\n| --- | ---: |');
  for (const [name, mint] of [
    ['crypto.randomUUID() (v4, random)', () => randomUUID()],
    ['UUIDv7 (time-ordered)', uuidV7],
  ] as const) {
    const samples: number[] = [];
    let sink = 0;
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      for (let i = 0; i < N; i++) sink += mint().length;
      samples.push(((performance.now() - t0) * 1e6) / N);
    }
    if (sink === 0) console.log('');
    console.log(`| ${name} | ${median(samples).toFixed(0)} |`);
  }
}
