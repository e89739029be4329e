import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findTool } from './support/tools.js';

const run = promisify(execFile);
const alertsDir = join(import.meta.dirname, '..', 'alerts');
const rulesFile = join(alertsDir, 'prazo.rules.yml');
const testsFile = join(alertsDir, 'prazo.rules.test.yml');
const rules = readFileSync(rulesFile, 'utf8');
const tests = readFileSync(testsFile, 'utf8');
const alertNames = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1]!);
const promtool = findTool('promtool');

describe('alert rules', () => {
  it('cover every alert the issue asks for', () => {
    expect(alertNames).toEqual([
      'PrazoRetryRatioHigh',
      'PrazoRetryRatioNearBudget',
      'PrazoRetryBudgetExhausted',
      'PrazoTimeoutBelowHealthyP99',
      'PrazoDeadlineFastFailsRising',
      'PrazoHedgeWinRateCollapsed',
      'PrazoInstancesEjected',
      'PrazoCallsShedByClient',
      'PrazoServerShedding',
    ]);
  });

  it('give every alert a severity, a summary and a description that says what to do', () => {
    const blocks = rules.split(/^\s*- alert: /m).slice(1);
    expect(blocks).toHaveLength(alertNames.length);
    for (const block of blocks) {
      expect(block).toMatch(/severity: (warning|critical)/);
      expect(block).toMatch(/summary: ("[^"\n]+"|'[^'\n]+')/);
      const description = /description: >-\n([\s\S]+?)(?:\n\s*\n|$)/.exec(block)?.[1] ?? '';
      expect(description.length).toBeGreaterThan(150);
    }
  });

  it('test every alert with at least one firing and one non-firing case', () => {
    const cases = [...tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:( \[\])?/g)];
    for (const name of alertNames) {
      const mine = cases.filter((c) => c[1] === name);
      expect(
        mine.some((c) => c[2] === ' []'),
        `${name} has a non-firing case`,
      ).toBe(true);
      expect(
        mine.some((c) => c[2] === undefined),
        `${name} has a firing case`,
      ).toBe(true);
    }
  });

  const skipped = promtool ? '' : ' — skipped: promtool not found (Debian: prometheus)';
  describe.skipIf(!promtool)(`with promtool${skipped}`, () => {
    it('pass `promtool check rules`', async () => {
      const { stdout } = await run(promtool!, ['check', 'rules', rulesFile]);
      expect(stdout).toContain(`SUCCESS: ${alertNames.length} rules found`);
    });

    it('pass `promtool test rules`', async () => {
      const { stdout } = await run(promtool!, ['test', 'rules', testsFile], { cwd: alertsDir });
      expect(stdout).toContain('SUCCESS');
    });
  });
});
