import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardServer } from '../src/drill/dashboard/server.js';
import { runDrill } from '../src/drill/run-drill.js';
import { acquireDrillLock } from './drill-lock.js';
import { launchChromium, skipWithoutChromium } from './support/chromium.js';

// CI installs Debian's chromium (.ci/run); elsewhere the test is skipped when it is missing.
const skip = skipWithoutChromium;

describe.skipIf(skip)('the live dashboard in a real browser', () => {
  let release: () => void = () => {};
  beforeAll(async () => {
    release = await acquireDrillLock();
  }, 130_000);
  afterAll(() => release());

  it('draws charts that receive data points while a short drill runs, then the summary', async () => {
    const dashboard = await startDashboardServer(0);
    const browser = await launchChromium();
    try {
      const running = runDrill(
        {
          rps: 40,
          // The page is judged on what it draws, not on the figures: a short unmeasured start.
          preWarmMs: 500,
          phases: {
            warmupMs: 1500,
            triggerMs: 1500,
            fleetMs: 1500,
            degradeMs: 1500,
            burstMs: 1500,
            tailMs: 1500,
            recoveryMs: 1000,
          },
          overloadMs: 1_500,
        },
        { onReady: (context) => dashboard.attach(context) },
      );
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      const external: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(dashboard.url)) external.push(request.url());
      });
      await page.goto(dashboard.url);
      // Every chart (6 figures × naive and prazo) must have drawn points from the live timeline (a second
      // of it at least; the per-instance shares, of the fleet phase alone).
      await page.waitForFunction(
        () => {
          // Runs in the page; the project compiles without the DOM library, hence the local type.
          type Page = {
            document: { querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null }> };
          };
          const charts = Array.from((globalThis as unknown as Page).document.querySelectorAll('svg.chart'));
          return charts.length === 12 && charts.every((c) => Number(c.getAttribute('data-points')) >= 2);
        },
        null,
        { timeout: 60_000, polling: 500 },
      );
      const points = await page.$$eval('svg.chart', (charts) =>
        charts.map((c) => Number(c.getAttribute('data-points'))),
      );
      expect(points.every((n) => n >= 2)).toBe(true);
      // Prometheus can scrape the same figures while the drill runs.
      const metrics = await (await fetch(`${dashboard.url}metrics`)).text();
      expect(metrics).toContain('prazo_drill_pool_in_use{config="naive"}');
      expect(metrics).toContain('prazo_drill_retry_ratio{config="prazo"}');
      expect(metrics).toContain('prazo_drill_supplier_instance_requests{config="prazo",instance="2"}');
      mkdirSync('reports', { recursive: true });
      await page.screenshot({ path: 'reports/drill-browser.png', fullPage: true });

      const report = await running;
      dashboard.finish(report);
      await page.waitForSelector('#summary table', { timeout: 10_000 });
      // The overload experiment: one bar per configuration.
      expect(await page.getAttribute('#summary svg.overload', 'data-bars')).toBe('3');
      expect(await page.textContent('#status')).toContain('Finished');
      // Where the deadline went: a failing and a slow /checkout per configuration, drawn as SVG bars.
      await page.waitForSelector('#waterfalls svg.waterfall', { timeout: 10_000 });
      const waterfalls = await page.$$eval('#waterfalls svg.waterfall', (svgs) =>
        svgs.map((s) => `${s.getAttribute('data-config')} ${Number(s.getAttribute('data-rows')) > 0}`),
      );
      expect(waterfalls).toContain('prazo true');
      expect(waterfalls).toContain('naive true');
      expect(errors).toEqual([]);
      expect(external).toEqual([]);
    } finally {
      await browser.close();
      await dashboard.close();
    }
  }, 120_000);
});
