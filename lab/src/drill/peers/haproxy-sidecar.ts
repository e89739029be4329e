import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, freePort } from '../local-binary.js';
import { type HaproxyConfigInput, haproxyConfig } from './haproxy-config.js';

/** How to get HAProxy when it is missing: printed by the drill, which then skips that column. */
export const HAPROXY_INSTALL_HINT =
  'HAProxy is not installed (no `haproxy` on PATH or in /usr/sbin): install it with `sudo apt-get install haproxy` (Debian/Ubuntu) or `brew install haproxy` (macOS) to add the HAProxy column; the drill skipped it';

/** Where the `haproxy` executable is, or null when it is not installed. */
export function findHaproxy(env: NodeJS.ProcessEnv = process.env): string | null {
  return findExecutable('haproxy', ['/usr/sbin', '/usr/local/sbin'], env['PATH'] ?? '');
}

/** A running HAProxy started by the drill. */
export interface HaproxySidecar {
  readonly name: string;
  readonly pid: number;
  /** `http://127.0.0.1:PORT`: the shop's edge calls this instead of the instances. */
  readonly url: string;
  /** Stops HAProxy by its PID (SIGTERM, then SIGKILL after a second) and removes its config. */
  stop(): Promise<void>;
  kill(): void;
}

/**
 * Starts HAProxy in the foreground (`-db`) with a generated configuration on 127.0.0.1 and waits
 * until it accepts connections.
 *
 * @throws Error when HAProxy exits or does not listen within 10 s (with its output).
 */
export async function startHaproxy(
  binary: string,
  input: Omit<HaproxyConfigInput, 'port'>,
  name = 'haproxy',
): Promise<HaproxySidecar> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'prazo-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig({ ...input, port }));
  const child: ChildProcess = spawn(binary, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    if (output.length < 4000) output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => {
    output += String(error);
  });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      kill();
      cleanup();
      throw new Error(`HAProxy did not start: ${output.trim() || 'no output'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    name,
    pid: child.pid ?? 0,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(kill, 1000);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    },
    kill() {
      kill();
      cleanup();
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
