/**
 * What the server benchmarks share (bench/idempotency.bench.ts, bench/server-admission.bench.ts):
 * each server variant in a child process of its own (pinned to CPU 1 when `taskset` is there), a
 * closed-loop undici client in the parent (CPU 0), and the server's CPU time per request
 * (`process.cpuUsage()` in the child around each measurement, one server loaded at a time). On a
 * shared machine the closed-loop req/s mostly says how busy the client's CPU was; CPU per request is
 * what the server pays. A warm-up round each, then rounds that alternate the order; medians.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { type Dispatcher, Pool } from 'undici';

/** The options of a server benchmark run. */
export interface ServerBenchArgs {
  rounds: number;
  seconds: number;
  concurrency: number;
  pin: boolean;
  /** Node flags for every server child (`--server-flag --trace-gc`, repeatable), e.g. a profiler's. */
  serverFlags: string[];
}

/**
 * Reads `--rounds`, `--seconds`, `--concurrency`, `--no-pin`, `--server-flag F` (repeatable) and
 * `--prof-dir DIR` (a CPU profile of each server child, written when it exits).
 */
export function parseServerBenchArgs(argv: readonly string[]): ServerBenchArgs {
  const args: ServerBenchArgs = { rounds: 7, seconds: 2, concurrency: 32, pin: true, serverFlags: [] };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--no-pin':
        args.pin = false;
        continue;
      case '--rounds':
        args.rounds = Number(value);
        break;
      case '--seconds':
        args.seconds = Number(value);
        break;
      case '--concurrency':
        args.concurrency = Number(value);
        break;
      case '--server-flag':
        args.serverFlags.push(String(value));
        break;
      case '--prof-dir':
        args.serverFlags.push('--cpu-prof', `--cpu-prof-dir=${value}`);
        break;
      default:
        continue;
    }
    i++;
  }
  return args;
}

/** The arguments after `--serve` when this process is a server child, else undefined. */
export function serveArgs(argv: readonly string[]): string[] | undefined {
  const at = argv.indexOf('--serve');
  return at === -1 ? undefined : argv.slice(at + 1);
}

/**
 * The variants after `--serve-all` when this process is the one server child of a one-process run
 * (`compareServers(…, { oneProcess: true })`), else undefined.
 */
export function serveAllArgs(argv: readonly string[]): string[][] | undefined {
  const at = argv.indexOf('--serve-all');
  return at === -1 ? undefined : (JSON.parse(argv[at + 1]!) as string[][]);
}

/**
 * In a server child, once it listens on `port` (or, serving every variant of a one-process run, on
 * `ports`, in the order of the variants): tells the parent, answers its questions for the process's
 * CPU time, and exits when the parent goes.
 */
export function serveForBench(port: number | number[]): void {
  process.send?.(typeof port === 'number' ? { port } : { ports: port });
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.([user, system]);
  });
  process.on('disconnect', () => process.exit(0));
}

/**
 * One request of the closed loop against the server of `variant`; `sequence` counts the requests of
 * the whole run from 1.
 */
export type BenchRequest = (sequence: number, variant: readonly string[]) => Dispatcher.RequestOptions;

/** What a run measured for one server variant: one value per round. */
export interface ServerRun {
  /** The `--serve` arguments the child was started with. */
  variant: readonly string[];
  rates: number[];
  /** Server CPU time (user + system) per request, µs. */
  cpuUs: number[];
  /**
   * Its user part alone, µs per request. The system part is mostly the socket writes, whose time on
   * loopback includes delivering to the client and waking it: it moves with the client's and the
   * machine's state as much as with the server's work.
   */
  userUs: number[];
}

/**
 * Starts one child per entry of `variants` (`script --serve ...variant`, which must end in
 * {@link serveForBench}), loads each in turn with `concurrency` requests in flight for `seconds`
 * (every response must have `status`), and returns the rounds' figures in the order of `variants`.
 *
 * With `oneProcess`, one child serves every variant on a port of its own (`script --serve-all
 * JSON`, see {@link serveAllArgs}): the variants share the process, its heap and its JIT, so the
 * bias of one process against another (up to ±20 % between two identical servers on a shared
 * machine) cancels, and each round's CPU per request is still one variant's alone, as they are
 * loaded one at a time.
 */
export async function compareServers(
  script: string,
  variants: readonly (readonly string[])[],
  request: BenchRequest,
  status: number,
  args: ServerBenchArgs,
  { oneProcess = false }: { oneProcess?: boolean } = {},
): Promise<{ runs: ServerRun[]; pinned: boolean }> {
  const pinned = args.pin && os.availableParallelism() >= 2 && taskset('0', process.pid);
  const children: ChildProcess[] = [];
  const pools: Pool[] = [];
  const start = async (serveArgv: string[]): Promise<{ child: ChildProcess; ports: number[] }> => {
    const child = fork(script, serveArgv, {
      execArgv: ['--import', 'tsx', ...args.serverFlags],
      stdio: 'inherit',
    });
    const [message] = (await once(child, 'message')) as [{ port?: number; ports?: number[] }];
    if (pinned && child.pid !== undefined) taskset('1', child.pid);
    return { child, ports: message.ports ?? [message.port!] };
  };
  try {
    if (oneProcess) {
      const { child, ports } = await start(['--serve-all', JSON.stringify(variants)]);
      for (const port of ports) {
        children.push(child);
        pools.push(new Pool(`http://127.0.0.1:${port}`, { connections: args.concurrency }));
      }
    } else
      for (const variant of variants) {
        const { child, ports } = await start(['--serve', ...variant]);
        children.push(child);
        pools.push(new Pool(`http://127.0.0.1:${ports[0]}`, { connections: args.concurrency }));
      }
    let sequence = 0;
    /** The child's CPU time so far, µs: [user, system]. */
    const serverCpuUs = async (child: ChildProcess): Promise<[number, number]> => {
      child.send('cpu');
      const [us] = (await once(child, 'message')) as [[number, number]];
      return us;
    };
    const measure = async (i: number): Promise<{ rate: number; cpuUs: number; userUs: number }> => {
      const child = children[i]!;
      const pool = pools[i]!;
      const variant = variants[i]!;
      const cpuBefore = await serverCpuUs(child);
      const stopAt = performance.now() + args.seconds * 1000;
      let done = 0;
      const loop = async (): Promise<void> => {
        while (performance.now() < stopAt) {
          const res = await pool.request(request(++sequence, variant));
          await res.body.dump();
          if (res.statusCode !== status) throw new Error(`status ${res.statusCode}, expected ${status}`);
          done++;
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: args.concurrency }, loop));
      const rate = done / ((performance.now() - started) / 1000);
      const [user, system] = await serverCpuUs(child);
      return {
        rate,
        cpuUs: (user + system - cpuBefore[0] - cpuBefore[1]) / done,
        userUs: (user - cpuBefore[0]) / done,
      };
    };
    const runs: ServerRun[] = variants.map((variant) => ({ variant, rates: [], cpuUs: [], userUs: [] }));
    for (let i = 0; i < variants.length; i++) await measure(i); // warm-up
    for (let r = 0; r < args.rounds; r++) {
      const order = runs.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const { rate, cpuUs, userUs } = await measure(i);
        runs[i]!.rates.push(rate);
        runs[i]!.cpuUs.push(cpuUs);
        runs[i]!.userUs.push(userUs);
      }
    }
    return { runs, pinned };
  } finally {
    for (const pool of pools) await pool.close();
    for (const child of children) if (child.connected) child.disconnect();
  }
}

/** The line that says how a run was made (rounds, pinning, Node, load average). */
export function describeRun(args: ServerBenchArgs, pinned: boolean): string {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return `${args.rounds} rounds × ${args.seconds} s, ${args.concurrency} in flight, ${pinned ? 'client on CPU 0, servers on CPU 1' : 'unpinned'}; Node ${process.version}; load average ${load}`;
}

/** The middle value (the upper middle of an even count, as the server benchmarks always took it). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1]!;
}

function taskset(cpu: string, pid: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false; // no taskset: unpinned
  }
}
