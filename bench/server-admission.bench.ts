/**
 * What server admission adds to a minimal Express 5 and Fastify 5 handler: the same JSON handler
 * served bare, behind prazo's deadline adapter, behind the adapter plus `createAdmission()` with its
 * defaults (the arrival check against the route's live service time), and with an in-flight limit
 * high enough never to queue (slot counting and CoDel bookkeeping on every request). The harness is
 * bench/support/server-cpu.ts: one child process per server (pinned to CPU 1 when `taskset` is
 * there), the closed-loop undici client here (CPU 0), the server process's CPU time per request
 * (`process.cpuUsage()` around each measurement, only one server loaded at a time): on a shared
 * machine the closed-loop req/s mostly says how busy the client's CPU was, while CPU per request is
 * what the server pays. Rounds alternate the order; medians of the rounds. Last, the admission's own
 * work alone, without HTTP.
 *
 *   node --import tsx bench/server-admission.bench.ts [--rounds 7] [--seconds 2] [--concurrency 32]
 *     [--only express|fastify] [--no-pin] [--prof-dir DIR] [--server-flag F]
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import Fastify from 'fastify';
import { createAdmission } from '../src/admission/admission.js';
import { Deadline } from '../src/deadline/deadline.js';
import { admissionMiddleware, deadlineMiddleware } from '../src/server/express.js';
import { deadlinePlugin } from '../src/server/fastify.js';
import {
  compareServers,
  describeRun,
  median,
  parseServerBenchArgs,
  serveArgs,
  serveForBench,
} from './support/server-cpu.js';

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

type Framework = 'express' | 'fastify';

const served = serveArgs(process.argv);
if (served !== undefined) {
  // One server per process: the variants share no JIT state (the adapters' code is the same
  // functions in every instance, and a shared hook sees every variant's paths).
  const [framework, variant] = served as [Framework, Variant];
  serveForBench(framework === 'express' ? await expressServer(variant) : await fastifyServer(variant));
} else {
  const args = parseServerBenchArgs(process.argv);
  const onlyAt = process.argv.indexOf('--only');
  const frameworks = (['express', 'fastify'] as const).filter(
    (f) => onlyAt === -1 || process.argv[onlyAt + 1] === f,
  );
  const { runs, pinned } = await compareServers(
    fileURLToPath(import.meta.url),
    frameworks.flatMap((framework) => VARIANTS.map((variant) => [framework, variant])),
    () => ({ path: '/', method: 'GET' }),
    200,
    args,
  );
  console.log(`${describeRun(args, pinned)}\n`);
  console.log(
    '| framework | server | req/s (median) | server CPU µs per request (median) | CPU added to deadline alone |',
  );
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const framework of frameworks) {
    const mine = runs.filter((r) => r.variant[0] === framework);
    const base = median(mine.find((r) => r.variant[1] === 'deadline')!.cpuUs);
    for (const run of mine) {
      const us = median(run.cpuUs);
      const cost = run.variant[1] === 'bare' ? '' : `${((us / base - 1) * 100).toFixed(1)} %`;
      console.log(
        `| ${framework} | ${run.variant[1]} | ${median(run.rates).toFixed(0)} | ${us.toFixed(1)} | ${cost} |`,
      );
    }
  }

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
