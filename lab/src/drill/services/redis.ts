import { type ChildProcess, spawn } from 'node:child_process';
import { findExecutable, freePort } from '../local-binary.js';

/** A free port of 127.0.0.1, for a Redis of one's own (as the tests start one). */
export { freePort };

/** The drill's Redis: the prazo column's order writes share it as their idempotency store. */
export interface DrillRedis {
  readonly pid: number;
  readonly port: number;
  /** Stops it (SIGTERM, then SIGKILL after a second) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills it at once (an interrupted drill). */
  kill(): void;
}

/** What to install when the drill finds no `redis-server`. */
export const REDIS_INSTALL_HINT =
  'redis-server is not installed (apt-get install redis-server): the prazo column’s order writes then use an in-memory store per supplier instance, which does not deduplicate a retry that lands on another instance';

/** `redis-server` on the PATH (or Debian's /usr/bin/redis-server), or null. */
export function findRedisServer(path = process.env['PATH'] ?? ''): string | null {
  return findExecutable('redis-server', ['/usr/bin'], path);
}

/**
 * Spawns `binary` as a `redis-server` on `port` of 127.0.0.1 — no persistence, no eviction of the
 * keys (`noeviction`: an evicted record would let a repeat run again) — and resolves once it accepts
 * connections; rejects (the process killed) after `startTimeoutMs` or when it exits first. The drill's
 * Redis and the tests' both start here.
 */
export async function launchRedis(
  binary: string,
  port: number,
  startTimeoutMs = 10_000,
): Promise<ChildProcess> {
  const child: ChildProcess = spawn(
    binary,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  child.on('error', () => {});
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start within ${startTimeoutMs} ms:\n${output}`));
    }, startTimeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) done(resolve);
    };
    const onExit = (code: number | null) =>
      done(() => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      settle();
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
  child.stdout?.resume();
  return child;
}

/** Starts a `redis-server` on a free port of 127.0.0.1 ({@link launchRedis}). */
export async function startDrillRedis(binary: string, startTimeoutMs = 10_000): Promise<DrillRedis> {
  const port = await freePort();
  const child = await launchRedis(binary, port, startTimeoutMs);
  const gone =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const kill = () => {
    if (!exited()) child.kill('SIGKILL');
  };
  return {
    pid: child.pid!,
    port,
    async stop() {
      if (exited()) return;
      const timer = setTimeout(kill, 1_000);
      child.kill('SIGTERM');
      await gone;
      clearTimeout(timer);
    },
    kill,
  };
}
