/**
 * What the calls keep alive, per entry point: each contender runs alone in a client process started
 * with `--trace-gc-nvp`, against the keep-alive server of the client benchmark (another process, on
 * the other core when `taskset` exists), `--concurrency` calls in flight; the young-generation
 * collections it traces are summed up. Bytes that survive a scavenge are copied by it, and an
 * object a finished call still reaches is copied again by every scavenge until something lets go:
 * the survival per scavenge, not the CPU time of one call, shows it. prazo is the built package.
 *
 *   npm run build && node --import tsx bench/gc-survival.bench.ts \
 *     [--requests 40000] [--concurrency 32] [--only a,b] [--undici DIR]
 *
 * `--undici DIR`: the `Agent` of the entry-point rows comes from the undici installed under `DIR`
 * (`npm install --prefix DIR undici@8`), as in `bench/client.bench.ts`.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, Pool } from 'undici';
import { benchDependency, measuredCalls, runTraced, type TracedRun } from './support/gc-trace.mjs';
import { importBuilt, startBenchServer } from './support/load.js';

interface Contender {
  name: string;
  create(origin: string): { call(): Promise<unknown>; close(): Promise<unknown> };
}

const SELF = fileURLToPath(import.meta.url);

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function contenders(): Promise<Contender[]> {
  const { dependency, install, prazoInterceptor, uninstall } =
    await importBuilt<typeof import('../src/index.js')>('index');
  const dir = arg('undici');
  const EntryAgent: typeof Agent =
    dir === undefined
      ? Agent
      : (
          (await import(pathToFileURL(join(dir, 'node_modules', 'undici', 'index.js')).href)) as {
            Agent: typeof Agent;
          }
        ).Agent;
  const options = benchDependency;
  return [
    {
      name: 'undici Pool.request',
      create(origin) {
        const pool = new Pool(origin, { connections: 64 });
        return {
          call: async () => (await pool.request({ path: '/', method: 'GET' })).body.text(),
          close: () => pool.close(),
        };
      },
    },
    {
      name: 'prazo dep.request',
      create(origin) {
        const dep = dependency(options(origin));
        return { call: async () => (await dep.request({ path: '/' })).body.text(), close: () => dep.close() };
      },
    },
    {
      name: 'undici Agent.request',
      create(origin) {
        const agent = new EntryAgent({ connections: 64 });
        return {
          call: async () => (await agent.request({ origin, path: '/', method: 'GET' })).body.text(),
          close: () => agent.close(),
        };
      },
    },
    {
      name: 'prazo interceptor over Agent.request',
      create(origin) {
        const agent = new EntryAgent({ connections: 64 });
        const interceptor = prazoInterceptor({ dependencies: [options(origin)] });
        const composed = agent.compose(interceptor);
        return {
          call: async () => (await composed.request({ origin, path: '/', method: 'GET' })).body.text(),
          close: () => interceptor.close().then(() => agent.close()),
        };
      },
    },
    {
      name: 'global fetch',
      create(origin) {
        return { call: async () => (await fetch(`${origin}/`)).text(), close: async () => {} };
      },
    },
    {
      name: 'global fetch with install()',
      create(origin) {
        install({ dependencies: [options(origin)] });
        return { call: async () => (await fetch(`${origin}/`)).text(), close: () => uninstall() };
      },
    },
  ];
}

/** In the client process: warm up, then the measured calls; the result on the last stdout line. */
async function child(name: string, origin: string, requests: number, concurrency: number): Promise<void> {
  const contender = (await contenders()).find((c) => c.name === name)!;
  const client = contender.create(origin);
  await measuredCalls(() => client.call(), requests, concurrency);
  await client.close();
}

/** Runs one contender in a traced client process and sums up the scavenges of the measured calls. */
function measure(name: string, origin: string, requests: number, concurrency: number): Promise<TracedRun> {
  const args = ['--import', 'tsx', SELF, '--child', name, '--origin', origin];
  args.push('--requests', String(requests), '--concurrency', String(concurrency));
  const dir = arg('undici');
  if (dir !== undefined) args.push('--undici', dir);
  return runTraced(name, args, hasTaskset());
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const requests = Number(arg('requests') ?? 40_000);
const concurrency = Number(arg('concurrency') ?? 32);
const childName = arg('child');
if (childName !== undefined) {
  await child(childName, arg('origin')!, requests, concurrency);
} else {
  const only = arg('only')?.split(',');
  const all = (await contenders()).map((c) => c.name);
  const names = only === undefined ? all : all.filter((n) => only.some((o) => n.startsWith(o)));
  const server = await startBenchServer('http', true);
  const lines = [
    `${requests} requests, ${concurrency} in flight, one client process per contender; Node ${process.version}${arg('undici') === undefined ? '' : `, Agent from ${arg('undici')}`}`,
    '',
    '| client | scavenges per 1000 calls | survived per scavenge (MB) | pause per scavenge (ms) | client CPU µs/call |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  try {
    for (const name of names) {
      const s = await measure(name, server.origins[0]!, requests, concurrency);
      lines.push(
        `| ${name} | ${((s.scavenges / requests) * 1000).toFixed(2)} | ${s.survivedMb.toFixed(2)} | ${s.pauseMs.toFixed(2)} | ${s.cpuUs.toFixed(1)} |`,
      );
    }
  } finally {
    server.stop();
  }
  console.log(lines.join('\n'));
}
