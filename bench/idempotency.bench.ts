/**
 * What the server idempotency layer adds to a `node:http` handler behind `withDeadlineHandler`: the
 * same keyed `POST /orders` (a small JSON body, a fresh `Idempotency-Key` per request, as a client
 * minting keys sends it) served by the adapter alone, and by the adapter with `createIdempotency()`
 * on its default in-memory store (claim, body digest, response capture, completion), and on a store
 * held to 100 records (what retaining 10 000 records costs the garbage collector). Each server runs
 * in a child process (pinned to CPU 1 when `taskset` is there), the closed-loop undici client here
 * (CPU 0). The cost is the server's CPU time per request (`process.cpuUsage()` around each
 * measurement); rounds alternate the order; medians of the rounds. Last, what minting a key costs:
 * `crypto.randomUUID()` against a time-ordered UUIDv7 built from `Date.now()` and random bytes.
 *
 *   node --import tsx bench/idempotency.bench.ts [--rounds 7] [--seconds 2] [--concurrency 32] [--no-pin]
 *     [--prof-dir DIR]   (a CPU profile of each server process, written when it exits)
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { getRandomValues, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createIdempotency, createMemoryIdempotencyStore, withDeadlineHandler } from '../src/server/http.js';

const VARIANTS = [
  'adapter',
  'adapter + idempotency (memory)',
  'adapter + idempotency (memory, 100 records)',
] as const;
type Variant = (typeof VARIANTS)[number];
const BODY = '{"item":42,"quantity":2}';

async function serve(variant: Variant): Promise<number> {
  const options = { defaultMs: 1000, maxMs: 5000 };
  const server = createServer(
    withDeadlineHandler(
      async (req, res) => {
        let body = '';
        for await (const chunk of req) body += chunk;
        const payload = JSON.stringify({ order: body.length });
        res.writeHead(201, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        });
        res.end(payload);
      },
      variant === 'adapter'
        ? options
        : {
            ...options,
            idempotency: createIdempotency(
              variant === 'adapter + idempotency (memory)'
                ? {}
                : { store: createMemoryIdempotencyStore({ maxEntries: 100 }) },
            ),
          },
    ),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

interface Target {
  variant: Variant;
  port: number;
}

const serveAt = process.argv.indexOf('--serve');
if (serveAt !== -1) {
  const variant = process.argv[serveAt + 1] as Variant;
  process.send?.({ variant, port: await serve(variant) } satisfies Target);
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.(user + system);
  });
  process.on('disconnect', () => process.exit(0));
} else {
  const arg = (name: string, fallback: number): number => {
    const at = process.argv.indexOf(name);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  const rounds = arg('--rounds', 7);
  const seconds = arg('--seconds', 2);
  const concurrency = arg('--concurrency', 32);
  const pin = !process.argv.includes('--no-pin') && os.availableParallelism() >= 2;
  const taskset = (cpu: string, pid: number): boolean => {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const pinned = pin && taskset('0', process.pid);
  const children = new Map<Target, ChildProcess>();
  for (const variant of VARIANTS) {
    const profAt = process.argv.indexOf('--prof-dir');
    const prof = profAt === -1 ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.argv[profAt + 1]}`];
    const child = fork(fileURLToPath(import.meta.url), ['--serve', variant], {
      execArgv: ['--import', 'tsx', ...prof],
      stdio: 'inherit',
    });
    const [target] = (await once(child, 'message')) as [Target];
    if (pinned && child.pid !== undefined) taskset('1', child.pid);
    children.set(target, child);
  }
  const targets = [...children.keys()];
  const serverCpuUs = async (child: ChildProcess): Promise<number> => {
    child.send('cpu');
    const [us] = (await once(child, 'message')) as [number];
    return us;
  };
  let lastCpuPerRequest = 0;
  let sequence = 0;
  const measure = async (pool: Pool, child: ChildProcess): Promise<number> => {
    const cpuBefore = await serverCpuUs(child);
    const stopAt = performance.now() + seconds * 1000;
    let done = 0;
    const loop = async (): Promise<void> => {
      while (performance.now() < stopAt) {
        const res = await pool.request({
          path: '/orders',
          method: 'POST',
          body: BODY,
          headers: ['content-type', 'application/json', 'idempotency-key', `"bench-${++sequence}"`],
        });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`status ${res.statusCode}`);
        done++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, loop));
    const rate = done / ((performance.now() - started) / 1000);
    lastCpuPerRequest = ((await serverCpuUs(child)) - cpuBefore) / done;
    return rate;
  };
  const pools = new Map(
    targets.map((t) => [t, new Pool(`http://127.0.0.1:${t.port}`, { connections: concurrency })]),
  );
  for (const [t, pool] of pools) await measure(pool, children.get(t)!); // warm-up
  const rates = new Map<Target, number[]>(targets.map((t) => [t, []]));
  const cpu = new Map<Target, number[]>(targets.map((t) => [t, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      rates.get(t)!.push(await measure(pools.get(t)!, children.get(t)!));
      cpu.get(t)!.push(lastCpuPerRequest);
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  console.log(
    `${rounds} rounds × ${seconds} s, ${concurrency} in flight, ${pinned ? 'client on CPU 0, servers on CPU 1' : 'unpinned'}; Node ${process.version}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(
    '| server | req/s (median) | server CPU µs per request (median) | CPU over the adapter alone |',
  );
  console.log('| --- | ---: | ---: | ---: |');
  const base = median(cpu.get(targets.find((t) => t.variant === 'adapter')!)!);
  for (const t of targets) {
    const us = median(cpu.get(t)!);
    const cost = t.variant === 'adapter' ? '' : `${((us / base - 1) * 100).toFixed(1)} %`;
    console.log(`| ${t.variant} | ${median(rates.get(t)!).toFixed(0)} | ${us.toFixed(1)} | ${cost} |`);
  }
  for (const pool of pools.values()) await pool.close();
  for (const child of children.values()) child.disconnect();

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
