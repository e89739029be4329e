import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs an example as a user would (`npx tsx examples/<name>.ts`) and returns what it printed. */
async function example(name: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    cwd: root,
    timeout: 30_000,
  });
  return stdout;
}

describe('the examples of docs/interceptor.md run', () => {
  it('with-fetch: the global fetch retries a 503 through prazo', async () => {
    expect(await example('with-fetch')).toMatch(/^200 \{ sku: 42, stock: 7, attempt: '2;kind=retry' \}$/m);
  });

  it('with-undici: the interceptor on an Agent hedges around a slow instance', async () => {
    const out = await example('with-undici');
    const lines = out.split('\n').filter((line) => line.startsWith('200 '));
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).toMatch(/^200 fast \d+ ms$/);
      expect(Number(/(\d+) ms/.exec(line)![1])).toBeLessThan(700);
    }
  });

  it('with-sdk: ky, unmodified, gets a TypeError whose cause is the prazo error', async () => {
    const out = await example('with-sdk');
    expect(out).toContain('{ ok: true }');
    expect(out).toMatch(/PrazoError: (READ_TIMEOUT|DEADLINE_EXCEEDED)/);
  });
});
