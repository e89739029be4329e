/**
 * What server admission adds to a minimal Express 5 and Fastify 5 handler: the same JSON handler
 * served bare, behind prazo's deadline adapter, behind the adapter plus `createAdmission()` with its
 * defaults (the arrival check against the route's live service time), and with an in-flight limit
 * high enough never to queue (slot counting and CoDel bookkeeping on every request). The servers run
 * in a child process each (pinned to CPU 1 when `taskset` is there), the closed-loop undici client here
 * (CPU 0). The cost is the server process's CPU time per request (`process.cpuUsage()` around each
 * measurement, only one server loaded at a time): on a shared machine the closed-loop req/s mostly
 * says how busy the client's CPU was, while CPU per request is what the server pays. Rounds alternate
 * the order; medians of the rounds. Last, the admission's own work alone, without HTTP.
 *
 *   node --import tsx bench/server-admission.bench.ts [--rounds 7] [--seconds 2] [--concurrency 32]
 *     [--only express|fastify] [--no-pin]
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import express from 'express';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { createAdmission } from '../src/admission/admission.js';
import { Deadline } from '../src/deadline/deadline.js';
import { admissionMiddleware, deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';

const DEADLINE = { defaultMs: 1000, maxMs: 5000 };
const VARIANTS = ['bare', 'deadline', 'deadline + admission', 'deadline + admission, limit 4096'] as const;
type Variant = (typeof VARIANTS)[number];

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function expressServer(variant: Variant): Promise<number> {
  const app = express();
  const reply: express.RequestHandler = (_req, res) => {
    res.json({ ok: true });
  };
  if (variant === 'bare') app.get('/', reply);
  else {
    app.use(deadlineMiddleware(DEADLINE));
    if (variant === 'deadline') app.get('/', reply);
    else {
      const admission = createAdmission(variant === 'deadline + admission' ? {} : { maxInFlight: 4096 });
      app.get('/', admissionMiddleware(admission), reply);
    }
  }
  return listen(createServer(app));
}

async function fastifyServer(variant: Variant): Promise<number> {
  const app = Fastify();
  if (variant !== 'bare') {
    const admission =
      variant === 'deadline'
        ? undefined
        : createAdmission(variant === 'deadline + admission' ? {} : { maxInFlight: 4096 });
    await app.register(deadlinePlugin, admission === undefined ? DEADLINE : { ...DEADLINE, admission });
  }
  app.get('/', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

function fail(): never {
  throw new Error('refused');
}

interface Target {
  framework: 'express' | 'fastify';
  variant: Variant;
  port: number;
}

const serveAt = process.argv.indexOf('--serve');
if (serveAt !== -1) {
  // One server per process: the variants share no JIT state (the adapters' code is the same
  // functions in every instance, and a shared hook sees every variant's paths).
  const framework = process.argv[serveAt + 1] as Target['framework'];
  const variant = process.argv[serveAt + 2] as Variant;
  const port = framework === 'express' ? await expressServer(variant) : await fastifyServer(variant);
  process.send?.({ framework, variant, port } satisfies Target);
  // The parent asks for the server's CPU time around each measurement.
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
  const onlyAt = process.argv.indexOf('--only');
  const frameworks = (['express', 'fastify'] as const).filter(
    (f) => onlyAt === -1 || process.argv[onlyAt + 1] === f,
  );
  const pin = !process.argv.includes('--no-pin') && os.availableParallelism() >= 2;
  const taskset = (cpu: string, pid: number): boolean => {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
      return true;
    } catch {
      return false; // no taskset: unpinned
    }
  };
  const pinned = pin && taskset('0', process.pid);
  const children = new Map<Target, ChildProcess>();
  for (const framework of frameworks)
    for (const variant of VARIANTS) {
      const child = fork(fileURLToPath(import.meta.url), ['--serve', framework, variant], {
        execArgv: ['--import', 'tsx'],
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
  /** Server CPU time per request of the last {@link measure}, in µs. */
  let lastCpuPerRequest = 0;
  /** Requests per second of a closed loop of `concurrency` callers for `seconds`. */
  const measure = async (pool: Pool, child: ChildProcess): Promise<number> => {
    const cpuBefore = await serverCpuUs(child);
    const stopAt = performance.now() + seconds * 1000;
    let done = 0;
    const loop = async (): Promise<void> => {
      while (performance.now() < stopAt) {
        const res = await pool.request({ path: '/', method: 'GET' });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
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
    '| framework | server | req/s (median) | server CPU µs per request (median) | CPU added to deadline alone |',
  );
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const framework of ['express', 'fastify'] as const) {
    const mine = targets.filter((t) => t.framework === framework);
    if (mine.length === 0) continue;
    const base = median(rates.get(mine.find((t) => t.variant === 'deadline')!)!);
    for (const t of mine) {
      const rate = median(rates.get(t)!);
      const cost = t.variant === 'bare' ? '' : `${((base / rate - 1) * 100).toFixed(1)} %`;
      console.log(
        `| ${framework} | ${t.variant} | ${rate.toFixed(0)} | ${(1e6 / rate).toFixed(1)} | ${cost} |`,
      );
    }
  }
  for (const pool of pools.values()) await pool.close();
  for (const child of children.values()) child.disconnect();

  // The admission's own work per request, without HTTP: offer, run, release (which records the
  // service time), against the same deadline; with and without an in-flight limit.
  const deadline = Deadline.after(3_600_000);
  const REQUESTS = 1_000_000;
  console.log('\n| admission alone (no HTTP) | ns per request (median of 5) |\n| --- | ---: |');
  for (const [name, options] of [
    ['defaults (arrival check)', {}],
    ['limit 4096 (slots, CoDel)', { maxInFlight: 4096 }],
  ] as const) {
    const admission = createAdmission(options);
    const ns: number[] = [];
    for (let round = 0; round < 6; round++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < REQUESTS; i++)
        admission.offer('GET /', deadline, 'default', (ticket) => ticket.release(true), fail);
      if (round > 0) ns.push(Number(process.hrtime.bigint() - t0) / REQUESTS);
    }
    console.log(`| ${name} | ${median(ns).toFixed(0)} |`);
  }
  deadline.dispose();
}
