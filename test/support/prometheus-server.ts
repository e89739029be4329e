import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** Polls `read` every 250 ms until it returns a value, for at most `limitMs`. */
export async function poll<T>(read: () => Promise<T | undefined>, limitMs: number, what: string): Promise<T> {
  const until = Date.now() + limitMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const value = await read();
      if (value !== undefined) return value;
    } catch (error) {
      last = error; // Prometheus not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `Timed out after ${limitMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
  );
}

/** Whether a process with this PID still exists. */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a child by its PID: SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
export async function stopByPid(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = once(child, 'exit');
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (alive(child.pid)) process.kill(child.pid!, 'SIGKILL');
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** A Prometheus server started by {@link startPrometheus}. */
export interface TestPrometheus {
  /** Base URL, `http://127.0.0.1:<port>`. */
  url: string;
  process: ChildProcess;
  /** The last 4 KB of its stderr. */
  stderr(): string;
  /** Stops it by PID and removes its config and data. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a real Prometheus on 127.0.0.1 (a free port) with a 1 s scrape and evaluation interval, a
 * temporary config and data directory, scraping `targets` (host:port) as job `job`.
 */
export async function startPrometheus(options: {
  bin: string;
  job: string;
  targets: readonly string[];
  ruleFiles?: readonly string[];
}): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prazo-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  const rules = options.ruleFiles ?? [];
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      ...(rules.length === 0 ? [] : ['rule_files:', ...rules.map((r) => `  - ${JSON.stringify(r)}`)]),
      'scrape_configs:',
      `  - job_name: ${options.job}`,
      '    static_configs:',
      `      - targets: [${options.targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(
    options.bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    stderr: () => stderr,
    async stop() {
      await stopByPid(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
