/**
 * What the end-to-end client benchmarks share: the keep-alive server child, pinning the client and
 * the server to separate CPUs, the closed-loop driver, and the built package under test.
 */
import { execFileSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

/** The options of an end-to-end client benchmark run. */
export interface LoadArgs {
  rounds: number;
  seconds: number;
  concurrency: number;
  /** Contender name prefixes to run (all when undefined). */
  only: string[] | undefined;
  server: ServerKind;
  pin: boolean;
}

/**
 * Reads `--rounds`, `--seconds`, `--concurrency`, `--only a,b`, `--server http|raw` and `--no-pin`
 * over `defaults`.
 */
export function parseLoadArgs(
  argv: readonly string[],
  defaults: Pick<LoadArgs, 'rounds' | 'seconds'>,
): LoadArgs {
  const args: LoadArgs = { concurrency: 32, only: undefined, server: 'http', pin: true, ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--no-pin') {
      args.pin = false;
      continue;
    }
    if (flag === '--rounds') args.rounds = Number(value);
    else if (flag === '--seconds') args.seconds = Number(value);
    else if (flag === '--concurrency') args.concurrency = Number(value);
    else if (flag === '--only') args.only = String(value).split(',');
    else if (flag === '--server') args.server = value === 'raw' ? 'raw' : 'http';
    else continue;
    i++;
  }
  return args;
}

/** One contender's client: one call (the body read whole), and its release. */
export interface BenchClient {
  call(): Promise<void>;
  close(): Promise<void>;
}

/** The server of a run: node:http, or a minimal responder on node:net (`raw`). */
export type ServerKind = 'http' | 'raw';

export interface BenchServer {
  /** Three origins (three listening ports of the same process): three "instances". */
  origins: [string, string, string];
  /** Whether the client runs on CPU 0 and the server on CPU 1. */
  pinned: boolean;
  stop(): void;
}

/**
 * Starts the server child and, when `pin` and `taskset` allow it (two CPUs or more), puts the client
 * on CPU 0 and the server on CPU 1 so that neither steals the other's core.
 */
export async function startBenchServer(kind: ServerKind, pin: boolean): Promise<BenchServer> {
  const file = kind === 'raw' ? '../raw-server.mjs' : '../keepalive-server.mjs';
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], { stdio: 'inherit' });
  const pinned = pin && child.pid !== undefined && pinProcesses(child.pid);
  const ports = await new Promise<number[]>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { ports: number[] }).ports));
    child.once('error', reject);
  });
  return {
    origins: [`http://127.0.0.1:${ports[0]}`, `http://127.0.0.1:${ports[1]}`, `http://127.0.0.1:${ports[2]}`],
    pinned,
    stop: () => child.send('stop'),
  };
}

function pinProcesses(serverPid: number): boolean {
  if (os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(serverPid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** What one round measured. */
export interface RoundResult {
  count: number;
  errors: number;
  elapsedMs: number;
  /** CPU time of the client process (user + system), µs, over the round. */
  cpuUs: number;
}

/**
 * Drives `client` in a closed loop with `concurrency` calls in flight for `ms`. `onCall` sees each
 * successful call's latency in ms; `onError` each failure.
 */
export async function drive(
  client: BenchClient,
  concurrency: number,
  ms: number,
  onCall: (latencyMs: number) => void = () => {},
  onError: (error: unknown) => void = () => {},
): Promise<RoundResult> {
  const end = performance.now() + ms;
  let count = 0;
  let errors = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await client.call();
        onCall(performance.now() - t0);
        count++;
      } catch (error) {
        errors++;
        onError(error);
      }
    }
  };
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = process.cpuUsage(cpu0);
  return { count, errors, elapsedMs: performance.now() - start, cpuUs: cpu.user + cpu.system };
}

/** The positive number after `--name` on the command line, or `fallback`. */
export function positiveArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i === -1 ? Number.NaN : Number(process.argv[i + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Imports an entry of the built package (`dist/`), what users run: the source through a TypeScript
 * loader carries the loader's helpers on the hot path. Exits with a hint when it is not built.
 */
export async function importBuilt<T>(
  entry: 'index' | 'prometheus' | 'otel' | 'http' | 'express' | 'fastify',
): Promise<T> {
  const url = new URL(`../../dist/${entry}.js`, import.meta.url);
  if (!existsSync(url)) {
    console.error('The client benchmarks measure the built package: run `npm run build` first.');
    process.exit(2);
  }
  return (await import(url.href)) as T;
}

/**
 * prazo with every feature on: deadline (header + pre-call check), retry budget, calibrated
 * timeouts on the shared timer, hedging at the live p95, events with listeners.
 */
export function benchDependencyOptions(
  origins: string[],
  connections: number,
  hedge: boolean,
  overload: boolean | { minLimit: number; initialLimit: number } = false,
) {
  return {
    ...(overload === false ? {} : { concurrency: overload, throttle: true }),
    name: 'bench',
    origins,
    latency: { p99Ms: 200, p95Ms: 50 },
    userDeadlineMs: 2_000,
    attempts: 2,
    connections,
    hedge: hedge ? ({ at: 'p95' } as const) : (false as const),
  };
}
