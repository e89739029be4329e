import { describe, expect, it } from 'vitest';
import { runCli } from './run.js';

function capture() {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: {
      write: (chunk: string) => {
        out.stdout += chunk;
        return true;
      },
    },
    stderr: {
      write: (chunk: string) => {
        out.stderr += chunk;
        return true;
      },
    },
  };
  return { io, out };
}

describe('prazo drill (arguments)', () => {
  it('prints its help with every option', async () => {
    const { io, out } = capture();
    expect(await runCli(['drill', '--help'], io)).toBe(0);
    for (const flag of [
      '--quick',
      '--warmup',
      '--fleet',
      '--rps',
      '--pool',
      '--json',
      '--report',
      '--port',
      '--no-page',
      '--peers',
      '--trigger-factor',
      '--trigger-drop',
    ])
      expect(out.stdout).toContain(flag);
    // The peers are named, and how to get the one that is not an npm package.
    // The fleet phase and where its instances listen.
    expect(out.stdout).toContain('one instance sick');
    expect(out.stdout).toContain('127.0.0.3');
    for (const peer of ['cockatiel', 'opossum', 'interceptors.retry', 'HAProxy', 'apt-get install haproxy'])
      expect(out.stdout).toContain(peer);
  });

  it('refuses an unknown option with exit status 2, before starting anything', async () => {
    const { io, out } = capture();
    expect(await runCli(['drill', '--fast'], io)).toBe(2);
    expect(out.stderr).toContain('unknown option --fast (see --help)');
  });

  it('names the option whose value is out of range', async () => {
    const { io, out } = capture();
    expect(await runCli(['drill', '--rps', 'lots'], io)).toBe(2);
    expect(out.stderr).toContain('--rps expects a number');
    const second = capture();
    expect(await runCli(['drill', '--pool', '2.5', '--no-page'], second.io)).toBe(2);
    expect(second.out.stderr).toContain('--pool');
    const third = capture();
    expect(await runCli(['drill', '--fleet', '0.1', '--no-page'], third.io)).toBe(2);
    expect(third.out.stderr).toContain('--fleet expects a number in [0.5, 600]');
    const fourth = capture();
    expect(await runCli(['drill', '--trigger-factor', '0.5', '--no-page'], fourth.io)).toBe(2);
    expect(fourth.out.stderr).toContain('--trigger-factor expects a number in [1, 100]');
    // A drop that does not fit the trigger phase (its first second excluded) is named too.
    const fifth = capture();
    expect(await runCli(['drill', '--trigger', '3', '--trigger-drop', '2.5', '--no-page'], fifth.io)).toBe(2);
    expect(fifth.out.stderr).toContain('triggerDropMs');
  });
});
