import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilTimersOnTime } from '../../test/support/quiet-machine.js';
import { type DashboardServer, startDashboardServer } from '../src/drill/dashboard/server.js';
import type { DrillReport } from '../src/drill/report/drill-report.js';
import { runDrill } from '../src/drill/run-drill.js';
import { findRedisServer } from '../src/drill/services/redis.js';
import { acquireDrillLock } from './drill-lock.js';
import { launchChromium, skipWithoutChromium } from './support/chromium.js';

// Interrupting a drill with Ctrl-C: lab/test/drill-interrupt.test.ts.

// A short drill on a noisy 2-core machine: the bounds are loose on purpose. The full acceptance
// figures are checked by `prazo drill --quick --json` (see docs/drill.md).
const SHORT = {
  rps: 60,
  // A smaller pool fills within the short degradation, as 50 slots do at 100 rps in the real drill.
  pool: 25,
  preWarmMs: 2000,
  // The fleet phase is 4.5 s: the failures prazo meets on the sick instance before ejecting it are a
  // fixed count, and over 3 s they made up to 18 % of the phase's supplier requests on a loaded CI
  // machine (checked below: under half of naive's third); 7–11 % over 4.5 s.
  phases: {
    warmupMs: 2500,
    triggerMs: 2000,
    fleetMs: 4500,
    degradeMs: 3500,
    burstMs: 3000,
    tailMs: 1000,
    recoveryMs: 500,
  },
  // The trigger's capacity drop, short: its figures are read, not judged, here.
  triggerDropMs: 800,
  // The overload experiment, short: here only that it runs for the three configurations with its
  // checks (its figures are judged by lab/test/overload-experiment.test.ts).
  overloadMs: 1_500,
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the drill', () => {
  let release: () => void = () => {};
  beforeAll(async () => {
    release = await acquireDrillLock();
  }, 130_000);
  afterAll(() => release());

  it('measures naive and prazo on the same traffic and reports every figure', async ({ annotate }) => {
    let pids: number[] = [];
    // Not while the machine is busy elsewhere (the project's files import their modules at its start):
    // the comparisons need both columns to serve the warm-up.
    await untilTimersOnTime();
    // The same drill is watched live in a real browser (where Chromium is installed; CI installs
    // Debian's): one drill for both, as each costs a dozen processes on a 2-core machine.
    const dashboard = skipWithoutChromium ? null : await startDashboardServer(0);
    const running = runDrill(SHORT, {
      onReady: (context) => {
        pids = context.pids();
        dashboard?.attach(context);
      },
    });
    const [report] = await Promise.all([
      running,
      dashboard === null ? null : watchInBrowser(dashboard, running),
    ]);

    expect(report.format).toBe('prazo-drill-report');
    expect(report.phases.map((p) => p.name)).toEqual([
      'warmup',
      'tail',
      'trigger',
      'fleet',
      'degrade',
      'burst',
      'recovery',
    ]);
    // Per configuration: three supplier instances, inventory, orders, the shop and the users; and the
    // Redis the prazo column's order writes share, when redis-server is installed.
    const redis = findRedisServer() !== null;
    expect(pids).toHaveLength(redis ? 15 : 14);
    const { naive, prazo } = report.configs;
    for (const figures of [naive, prazo]) {
      expect(figures.checkout.sent).toBeGreaterThan(100);
      expect(figures.catalog.sent).toBeGreaterThan(100);
      expect(figures.supplierReceived).toBeGreaterThan(0);
      expect(report.timeline.samples.naive.length).toBeGreaterThan(10);
    }
    // Work for nobody: prazo never calls the supplier for a user who has gone (bounded by naive's).
    expect(prazo.afterDeadline).toBeLessThanOrEqual(naive.afterDeadline);
    // The comparison means something only if the machine could serve the healthy warm-up: on a
    // machine so loaded that even the warm-up failed, both configurations measure the machine.
    const served = (f: typeof naive) => f.byPhase.warmup.checkout.successRate ?? 0;
    if (served(naive) >= 0.9 && served(prazo) >= 0.9) {
      // The naive settings take the independent route down with the dependency; prazo keeps it up.
      expect(prazo.independentSuccessDuringDegradation!).toBeGreaterThan(
        naive.independentSuccessDuringDegradation!,
      );
      expect(naive.peakPoolInUse).toBeGreaterThanOrEqual(prazo.peakPoolInUse);
      // Blind retries multiply the supplier's load; the budget holds prazo's near 1.
      expect(naive.burstAmplification!).toBeGreaterThan(1.5);
      expect(prazo.burstAmplification!).toBeLessThan(1.3);
      expect(prazo.burstAmplification!).toBeLessThan(naive.burstAmplification!);
      // One instance of three sick (503), one slow. Counted on the instances: round-robin gives the
      // sick one its third and more (its failures are retried in turn); prazo ejects it after a few.
      expect(naive.fleet.instanceRequests).toHaveLength(3);
      expect(prazo.fleet.instanceRequests).toHaveLength(3);
      expect(naive.fleet.sickShare!).toBeGreaterThan(0.25);
      expect(prazo.fleet.sickShare!).toBeLessThan(0.2);
      expect(prazo.fleet.sickShare!).toBeLessThan(naive.fleet.sickShare! / 2);
      // Success in that phase is measured for both, but not compared here: over a phase this short
      // prazo's first failures on the sick instance (five per client before it is ejected) and the
      // slow instance's timeouts ask for more retries than a budget of a 1.5 s window allows, and it
      // can fall below naive's (docs/drill.md: it is above it over the default 10 s phase).
      for (const f of [naive, prazo]) {
        expect(f.byPhase.fleet.checkout.sent).toBeGreaterThan(50);
        expect(f.byPhase.fleet.checkout.successRate!).toBeGreaterThan(0);
      }
    } else {
      await annotate(
        `the machine could not serve the warm-up (/checkout success: naive ${served(naive).toFixed(2)}, prazo ${served(prazo).toFixed(2)}): the columns' comparisons were left out`,
        'notice', // listed at the end of the run (test/support/end-of-run-reporter.ts)
      );
    }
    expect(report.calibration['inventory']?.policy.readMs).toBeGreaterThan(0);
    // The supplier has finite capacity: its queue, every process's event-loop delay, and each
    // phase's success against the load it cost are measured for both columns.
    for (const f of [naive, prazo]) {
      expect(f.capacity.loopDelay?.worst.p99Ms).toBeGreaterThan(0);
      expect(f.capacity.byPhase.warmup.load).toBeGreaterThan(0.5);
      expect(f.capacity.trigger.peakQueue).toBeGreaterThanOrEqual(0);
    }
    // The overload experiment ran after the phases, for the three configurations, with its checks.
    expect(report.overload?.map((f) => f.config)).toEqual(['naive', 'prazo', 'prazo-protected']);
    for (const f of report.overload!) expect(f.capacityRps).toBe(320);
    expect(report.checks.filter((c) => c.name.startsWith('overload'))).toHaveLength(3);
    // Where the deadline went: per configuration a failing and the slowest successful /checkout,
    // each laid out from the gateway down to the edge's attempts (prazo's from its ledger).
    for (const config of ['naive', 'prazo']) {
      const own = report.waterfalls!.run.filter((w) => w.config === config);
      expect(own.map((w) => w.pick).sort()).toEqual(['failing', 'slow']);
      const slow = own.find((w) => w.pick === 'slow')!;
      // The first bars: the time before the gateway received it (when there was any), then the gateway.
      const gateway = slow.rows.findIndex((r) => r.hop === 'gateway' && r.kind === 'hop');
      expect(gateway).toBeLessThanOrEqual(1);
      expect(slow.rows[gateway]!.startMs).toBe(0);
      if (gateway === 1) expect(slow.rows[0]).toMatchObject({ hop: 'user', kind: 'transit' });
      expect(slow.rows.some((r) => r.hop === 'inventory' && r.kind === 'attempt')).toBe(true);
      expect(slow.userDeadlineMs).toBeGreaterThan(0);
    }
    expect(report.waterfalls!.byPhase.length).toBeGreaterThanOrEqual(4);
    // The checkout's order write: counted at the supplier instances for both columns; prazo's keyed
    // writes on the shared store create no order twice (naive's duplicates depend on the restarts'
    // timing: counted, not judged here).
    for (const f of [naive, prazo]) {
      expect(f.orderWrites?.created).toBeGreaterThan(50);
      expect(f.orderWrites!.succeeded).toBeLessThanOrEqual(f.orderWrites!.sent);
    }
    expect(prazo.orderWrites?.store).toBe(redis ? 'redis' : 'memory per instance');
    if (redis) {
      expect(prazo.orderWrites!.duplicates).toBe(0);
      expect(prazo.orderWrites!.storeErrors).toBe(0);
      expect(report.checks.find((c) => c.name.startsWith('prazo: 0 duplicate'))?.pass).toBe(true);
    }
    // Everything was stopped.
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 120_000);
});

/**
 * The live dashboard in a real browser while the drill runs: every chart receives data points, the
 * page fetches nothing from outside and throws nothing, Prometheus can scrape the same figures, and
 * once the report is in, the summary, the overload bars and the waterfalls are drawn.
 */
async function watchInBrowser(dashboard: DashboardServer, running: Promise<DrillReport>): Promise<void> {
  const browser = await launchChromium();
  try {
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
}
