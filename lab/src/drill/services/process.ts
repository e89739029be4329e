import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import type { ServiceMessage, ServiceSpec } from './spec.js';

/** A drill service running in its own process. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** Calls `method` in the service; rejects after `timeoutMs` (default 15 s). */
  call<T>(method: string, params?: unknown, timeoutMs?: number): Promise<T>;
  /** Asks the service to close, then kills it if it has not exited within a second. */
  stop(): Promise<void>;
  /** Kills the process at once (for an interrupted drill). */
  kill(): void;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Listens to the messages the service sends on its own (a load driver's results). */
  onMessage(listener: (message: ServiceMessage) => void): void;
}

let sourceBundle: Promise<string> | undefined;

/**
 * Where the service entry lives: next to the built bundle (`dist/drill-service.js`) when running from
 * the package. From a checkout (tests, tsx) the TypeScript entry is bundled once per drill process into
 * `node_modules/.cache/prazo/`: ten services each compiling TypeScript at start-up would take tens of
 * seconds on a busy 2-core machine.
 */
export function serviceEntry(): Promise<string> {
  const built = fileURLToPath(new URL('./drill-service.js', import.meta.url));
  if (existsSync(built)) return Promise.resolve(built);
  sourceBundle ??= bundleSource();
  return sourceBundle;
}

/**
 * `@prazo/cli-kit` is sources only (packages/cli-kit): bundled in, as lab/tsup.config.ts does, while
 * every other package stays external.
 */
const bundleKit: Plugin = {
  name: 'bundle @prazo/cli-kit',
  setup(build) {
    const require = createRequire(import.meta.url);
    build.onResolve({ filter: /^@prazo\/cli-kit(?:\/|$)/ }, (args) => ({ path: require.resolve(args.path) }));
  },
};

async function bundleSource(): Promise<string> {
  const source = fileURLToPath(new URL('./main.ts', import.meta.url));
  const cacheDir = fileURLToPath(new URL('../../../../node_modules/.cache/prazo/', import.meta.url));
  mkdirSync(cacheDir, { recursive: true });
  const outfile = `${cacheDir}drill-service-${process.pid}.mjs`;
  const { build, stop } = await import('esbuild');
  await build({
    entryPoints: [source],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    plugins: [bundleKit],
  });
  // esbuild keeps a helper process for later builds; there will be none.
  await stop();
  process.once('exit', () => {
    try {
      unlinkSync(outfile);
    } catch {}
  });
  return outfile;
}

/** Forks one service process and waits until it listens (rejects after `startTimeoutMs`). */
export async function startServiceProcess(
  name: string,
  spec: ServiceSpec,
  startTimeoutMs = 20_000,
): Promise<ServiceProcess> {
  const file = await serviceEntry();
  const child: ChildProcess = fork(file, [name], {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  let nextId = 1;
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A send to a process that is going away fails with EPIPE: the exit handler settles what was pending.
  child.on('error', () => {});
  child.on('exit', () => {
    exited = true;
    for (const { reject, timer } of pending.values()) {
      clearTimeout(timer);
      reject(new Error(`service ${name} exited`));
    }
    pending.clear();
  });
  child.on('message', (message: ServiceMessage) => {
    if (message.type !== 'reply') return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    clearTimeout(waiter.timer);
    if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error}`));
    else waiter.resolve(message.result);
  });

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service ${name} did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    const onMessage = (message: ServiceMessage) => {
      if (message.type === 'ready') done(() => resolve(message.port));
      else if (message.type === 'failed')
        done(() => reject(new Error(`service ${name}: ${message.message}`)));
    };
    const onExit = (code: number | null) =>
      done(() => reject(new Error(`service ${name} exited (${code}) before it was ready`)));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.send(spec);
  });

  const kill = () => {
    if (!exited) child.kill('SIGKILL');
  };
  return {
    name,
    pid: child.pid!,
    port,
    url: `http://${spec.role === 'supplier' ? spec.host : '127.0.0.1'}:${port}`,
    call<T>(method: string, params?: unknown, timeoutMs = 15_000): Promise<T> {
      if (exited || !child.connected) return Promise.reject(new Error(`service ${name} has exited`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}.${method} timed out`));
        }, timeoutMs);
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        child.send({ id, method, params }, (error) => {
          if (!error) return;
          clearTimeout(timer);
          pending.delete(id);
          reject(new Error(`${name}.${method}: ${error.message}`));
        });
      });
    },
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timer = setTimeout(kill, 1_000);
      if (!child.connected) kill();
      else child.send({ id: nextId++, method: 'close' }, (error) => error && kill());
      await gone;
      clearTimeout(timer);
    },
    kill,
    exited: exitedPromise,
    onMessage(listener) {
      child.on('message', listener);
    },
  };
}
