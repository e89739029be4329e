import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDrillLock } from './drill-lock.js';

// Not a load test (it judges processes and ports, not timings): it runs with the other integration
// tests, under the drill lock so that it never starts its drill alongside another one.

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const childPids = (pid: number): number[] => {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
};

const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('the drill, interrupted', () => {
  let release: () => void = () => {};
  beforeAll(async () => {
    release = await acquireDrillLock();
  }, 130_000);
  afterAll(() => release());

  it('leaves no process and no port behind when interrupted with Ctrl-C', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', 'lab/src/cli/main.ts', 'drill', '--warmup', '60', '--rps', '20'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`drill did not start: ${stderr}`)), 60_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('healthy warm-up')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const port = Number(/127\.0\.0\.1:(\d+)\//.exec(stderr)?.[1]);
    expect(port).toBeGreaterThan(0);
    const services = childPids(child.pid!);
    expect(services.length).toBeGreaterThanOrEqual(12);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('interrupted');
    const until = Date.now() + 3000;
    while (services.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(services.filter(alive)).toEqual([]);
    expect(await portOpen(port)).toBe(false);
  }, 90_000);
});
