/**
 * A real `redis-server` (Debian's package) on 127.0.0.1 for the tests: a free port, no persistence
 * (`--save '' --appendonly no`), stopped by its PID. Tests skip with {@link REDIS_MISSING} when the
 * binary is absent (CI installs it: .ci/run).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort, launchRedis } from '@prazo/lab/redis';
import { findTool } from './tools.js';

export const REDIS_BIN = findTool('redis-server', '/usr/bin/redis-server', 'redis-server');
export const REDIS_MISSING =
  REDIS_BIN === undefined ? 'redis-server is not installed (apt-get install redis-server)' : undefined;

export interface RedisServer {
  readonly port: number;
  readonly pid: number;
  /** Stops the server (SIGKILL by PID: nothing survives, like a crash) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  restart(): Promise<void>;
}

/** Starts a redis-server on a free port of 127.0.0.1. */
export async function startRedis(): Promise<RedisServer> {
  if (REDIS_BIN === undefined) throw new Error(REDIS_MISSING);
  const port = await freePort();
  let child: ChildProcess | undefined = await launchRedis(REDIS_BIN, port);
  return {
    port,
    get pid() {
      return child?.pid ?? -1;
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null || running.pid === undefined) return;
      const exited = once(running, 'exit');
      process.kill(running.pid, 'SIGKILL');
      await exited;
    },
    async restart() {
      if (child !== undefined) return;
      child = await launchRedis(REDIS_BIN, port);
    },
  };
}
