import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs bench/soak.ts in its own process (it needs --expose-gc and a clean handle table). */
function runSoak(seconds: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'bench/soak.ts', '--seconds', String(seconds), '--json'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the soak (20 s)', () => {
  it('leaves no handle, no retained call and no heap growth behind, with no process warning', async () => {
    const { code, stdout, stderr } = await runSoak(20);
    const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    // The failures name what leaked; show them (and stderr) when the verdict is not a pass.
    expect({ failures: report.failures, stderr: code === 0 ? '' : stderr }).toEqual({
      failures: [],
      stderr: '',
    });
    expect(code).toBe(0);
    expect(report.requests.completed).toBeGreaterThan(0);
    expect(report.handles.leftAboveBaseline).toEqual({});
    expect(report.poolSockets.afterClose).toBe(0);
    expect(report.warnings).toEqual([]);
  }, 120_000);
});
