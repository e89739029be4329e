import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { runDouble } from '../src/cli/double.js';
import { runCli } from '../src/cli/run.js';

function capture() {
  let stdout = '';
  let stderr = '';
  return {
    io: {
      stdout: {
        write: (chunk: string) => {
          stdout += chunk;
          return true;
        },
      },
      stderr: {
        write: (chunk: string) => {
          stderr += chunk;
          return true;
        },
      },
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

async function waitFor(check: () => boolean, withinMs = 5_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('prazo double', () => {
  it('prints the URL and admin endpoint of each instance, serves them, and stops on request', async () => {
    const out = capture();
    const controller = new AbortController();
    const exit = runDouble(
      ['--instances', '2', '--behaviour', '{"statuses":[{"status":503,"share":1}]}', '--seed', '5'],
      out.io,
      { signal: controller.signal },
    );
    await waitFor(() => out.stdout().includes('admin API'));
    const urls = [...out.stdout().matchAll(/instance (\d)\s+(\S+)\s+admin (\S+)/g)];
    expect(urls).toHaveLength(2);
    const [, , url, admin] = urls[0]!;
    const response = await request(url!);
    await response.body.dump();
    expect(response.statusCode).toBe(503);
    const stats = await request(`${admin}/stats`);
    expect(((await stats.body.json()) as { received: number }).received).toBe(1);
    controller.abort();
    expect(await exit).toBe(0);
    expect(out.stdout()).toContain('stopped');
  });

  it('reads the behaviour from @file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prazo-double-'));
    try {
      await writeFile(join(dir, 'b.json'), '{"answerAtMs": 5}');
      const out = capture();
      const controller = new AbortController();
      controller.abort();
      expect(
        await runDouble(['--behaviour', `@${join(dir, 'b.json')}`], out.io, { signal: controller.signal }),
      ).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--bogus'], 'unknown option --bogus (see --help)'],
    [['--port', '-1'], '--port must be an integer in [0, 65535], got "-1"'],
    [['--port', 'abc'], '--port must be an integer in [0, 65535], got "abc"'],
    [['--port', '70000'], '--port must be an integer'],
    [['--instances', '0'], '--instances must be an integer in [1, 64]'],
    [['--seed', '1.5'], '--seed must be an integer'],
    [['--behaviour', '{"hang":3}'], 'behaviour: `hang` must be a number in [0, 1]'],
    [['--behaviour', '{nope'], 'behaviour: not valid JSON'],
    [['--behaviour', '@/no/such/file.json'], '--behaviour: cannot read /no/such/file.json (ENOENT)'],
    [['extra'], 'unexpected argument "extra"'],
    [['--port'], "Option '--port <value>' argument missing"],
  ])('rejects %j with one line on stderr and exit code 2', async (argv, fragment) => {
    const out = capture();
    expect(await runCli(['double', ...argv], out.io)).toBe(2);
    expect(out.stderr()).toContain(fragment);
    expect(out.stderr().trim().split('\n')).toHaveLength(1);
    expect(out.stdout()).toBe('');
  });

  it('prints its help', async () => {
    const out = capture();
    expect(await runCli(['double', '--help'], out.io)).toBe(0);
    expect(out.stdout()).toContain('--behaviour JSON|@file');
  });

  it('stops cleanly on SIGINT when run as a process', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lab/src/cli/main.ts', 'double'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => stdout.includes('admin API'), 15_000);
      const url = /instance 0\s+(\S+)/.exec(stdout)![1]!;
      const response = await request(url);
      await response.body.dump();
      expect(response.statusCode).toBe(200);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stdout).toContain('stopped');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
