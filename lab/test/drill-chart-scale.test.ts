import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedYAxis } from '../src/drill/dashboard/chart-scale.js';
import { renderDashboardPage } from '../src/drill/dashboard/page.js';
import { reportDashboardData, startDashboardServer } from '../src/drill/dashboard/server.js';
import type { DrillReport } from '../src/drill/report/drill-report.js';
import type { DrillRecorder } from '../src/drill/report/recorder.js';
import type { DrillContext } from '../src/drill/run-drill.js';
import type { DrillConfig } from '../src/drill/services/spec.js';
import { launchChromium, skipWithoutChromium } from './support/chromium.js';

// CI installs Debian's chromium (.ci/run); elsewhere the test is skipped when it is missing.
const skip = skipWithoutChromium;

/**
 * A recorded `prazo drill --quick --peers --json` (naive, prazo, cockatiel, opossum, undici-retry,
 * haproxy), on a busy 2-core machine: the pages are drawn from what a drill measured, without running
 * one.
 */
const recorded = JSON.parse(
  readFileSync(join(import.meta.dirname, 'fixtures', 'drill-quick-peers.json'), 'utf8'),
) as DrillReport;

/** The report with only some of its columns, as a drill without `--peers` writes it. */
const withColumns = (report: DrillReport, columns: DrillConfig[]): DrillReport => ({ ...report, columns });

/**
 * The recorded drill replayed as a running one, `elapsedMs` into its traffic: the live server reads
 * the timeline from it as it does from a drill in progress (the recorder's samples so far, the
 * options, the phases, the clock). Nothing else of a drill is read by the page.
 */
function replay(report: DrillReport, columns: DrillConfig[], elapsedMs: number): DrillContext {
  const recorder: Pick<DrillRecorder, 'sampleMs' | 'phases' | 'configs' | 'samples'> = {
    sampleMs: report.timeline.sampleMs,
    phases: report.phases,
    configs: columns,
    samples: (config) => (report.timeline.samples[config] ?? []).filter((s) => s.tMs <= elapsedMs),
  };
  const context: Omit<DrillContext, 'recorder'> & { recorder: typeof recorder } = {
    options: report.options,
    configs: columns,
    phases: report.phases,
    recorder,
    elapsedMs: () => elapsedMs,
    pids: () => [],
    calibration: report.calibration,
    serviceMetrics: async () => '',
  };
  return context as DrillContext;
}

interface Box {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}
interface DrawnChart {
  chart: string;
  row: string;
  yMin: string | null;
  yMax: string | null;
  points: number;
  /** The y tick labels drawn, bottom to top. */
  ticks: string[];
  width: number;
  phaseLabels: Box[];
  legend: Box[];
}

/** What each chart of the page drew: its y axis as labelled, and where its texts ended up. */
async function drawnCharts(page: Page): Promise<DrawnChart[]> {
  return page.evaluate(() => {
    // Runs in the page; the project compiles without the DOM library, hence the local types.
    type El = {
      textContent: string | null;
      parentElement: El | null;
      id: string;
      getAttribute(n: string): string | null;
      querySelectorAll(s: string): ArrayLike<El>;
      getBBox(): { x: number; y: number; width: number; height: number };
    };
    const doc = (globalThis as unknown as { document: El }).document;
    const boxes = (svg: El, selector: string) =>
      Array.from(svg.querySelectorAll(selector)).map((t) => {
        const b = t.getBBox();
        return {
          text: t.textContent ?? '',
          left: b.x,
          right: b.x + b.width,
          top: b.y,
          bottom: b.y + b.height,
        };
      });
    return Array.from(doc.querySelectorAll('svg.chart')).map((svg) => ({
      chart: svg.getAttribute('data-chart') ?? '',
      row: svg.parentElement?.parentElement?.id ?? '',
      yMin: svg.getAttribute('data-y-min'),
      yMax: svg.getAttribute('data-y-max'),
      points: Number(svg.getAttribute('data-points')),
      ticks: Array.from(svg.querySelectorAll('text.y-tick')).map((t) => t.textContent ?? ''),
      width: Number((svg.getAttribute('viewBox') ?? '').split(' ')[2]),
      phaseLabels: boxes(svg, 'text.phase-label'),
      legend: boxes(svg, 'text.legend'),
    }));
  });
}

/** The charts by metric row: every panel of a row must carry the same y axis, drawn and labelled. */
function expectSharedAxes(charts: DrawnChart[], columns: readonly string[]): void {
  const rows = new Map<string, DrawnChart[]>();
  for (const c of charts) rows.set(c.row, [...(rows.get(c.row) ?? []), c]);
  expect(rows.size).toBe(6);
  for (const [row, panels] of rows) {
    expect(
      panels.map((p) => p.chart.slice(p.chart.indexOf('-') + 1)),
      row,
    ).toEqual(columns);
    const first = panels[0]!;
    expect(first.ticks.length, row).toBeGreaterThanOrEqual(2);
    // The axis range as the tick labels draw it: first and last label.
    expect([first.ticks[0], first.ticks[first.ticks.length - 1]], row).toEqual([first.yMin, first.yMax]);
    for (const panel of panels) {
      expect({ chart: panel.chart, ticks: panel.ticks, min: panel.yMin, max: panel.yMax }, row).toEqual({
        chart: panel.chart,
        ticks: first.ticks,
        min: first.yMin,
        max: first.yMax,
      });
    }
  }
}

/** No text of a chart is cut at its edges, and no two phase labels or legend entries overlap. */
function expectReadableLabels(charts: DrawnChart[]): void {
  for (const c of charts) {
    for (const group of [c.phaseLabels, c.legend]) {
      const sorted = [...group].sort((a, b) => a.top - b.top || a.left - b.left);
      sorted.forEach((box, i) => {
        expect(box.left, `${c.chart}: ${box.text}`).toBeGreaterThanOrEqual(0);
        expect(box.right, `${c.chart}: ${box.text}`).toBeLessThanOrEqual(c.width);
        const next = sorted[i + 1];
        if (next && next.top < box.bottom - 1)
          expect(next.left, `${c.chart}: "${box.text}" runs into "${next.text}"`).toBeGreaterThan(
            box.right + 2,
          );
      });
    }
    if (c.chart.startsWith('instances-'))
      expect(c.phaseLabels.map((l) => l.text)).toEqual(['one instance sick, one slow']);
    else expect(c.phaseLabels.map((l) => l.text).at(-1), c.chart).toBe('recovery');
  }
}

describe.skipIf(skip)('the drill page’s side-by-side panels in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function open(load: (page: Page) => Promise<unknown>, shot: string): Promise<DrawnChart[]> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await load(page);
      await page.waitForSelector('svg.chart[data-y-max]');
      mkdirSync('reports', { recursive: true });
      await page.screenshot({ path: join('reports', shot), fullPage: true });
      expect(errors).toEqual([]);
      return await drawnCharts(page);
    } finally {
      await page.close();
    }
  }

  /** Each sample's supplier requests per second, by kind, as the supplier panel draws them. */
  const supplierRates = (config: DrillConfig, untilMs = Number.POSITIVE_INFINITY) =>
    (recorded.timeline.samples[config] ?? [])
      .filter((s) => s.tMs <= untilMs)
      .flatMap((s) => [s.originals, s.retries, s.hedges].map((n) => (n * 1000) / recorded.timeline.sampleMs));
  const ratios = (config: DrillConfig) =>
    (recorded.timeline.samples[config] ?? []).map((s) => s.retryRatio ?? 0);

  it('the recording has naive and prazo apart, so that separate scales would differ', () => {
    // What each panel's own axis would be: the tests below fail if the page drew those.
    expect(sharedYAxis([supplierRates('naive')]).max).not.toBe(sharedYAxis([supplierRates('prazo')]).max);
    expect(sharedYAxis([ratios('naive')]).max).toBeGreaterThan(10 * sharedYAxis([ratios('prazo')]).max);
  });

  it('on the live page, the two panels of each metric share one y axis while the drill runs', async () => {
    const dashboard = await startDashboardServer(0);
    try {
      // Into the slow tail: the burst is behind, naive's retries at their height.
      const burst = recorded.phases.find((p) => p.name === 'burst')!;
      dashboard.attach(replay(recorded, ['naive', 'prazo'], burst.endMs + 2_000));
      const charts = await open(async (page) => {
        await page.goto(dashboard.url);
        // The page drew from /data, not only from what it was served with.
        await page.waitForResponse((r) => r.url().endsWith('/data') && r.ok());
        await page.waitForFunction(() => {
          type Doc = { querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null }> };
          const charts = Array.from(
            (globalThis as unknown as { document: Doc }).document.querySelectorAll('svg.chart'),
          );
          return charts.length === 12 && charts.every((c) => Number(c.getAttribute('data-points')) > 0);
        });
      }, 'drill-live-scale.png');
      expectSharedAxes(charts, ['naive', 'prazo']);
      expectReadableLabels(charts);
      // prazo's supplier panel is drawn on the axis of both panels' timelines so far, not on its own.
      const elapsedMs = burst.endMs + 2_000;
      const both = sharedYAxis([supplierRates('naive', elapsedMs), supplierRates('prazo', elapsedMs)]);
      const own = sharedYAxis([supplierRates('prazo', elapsedMs)]);
      expect(own.max).not.toBe(both.max);
      const prazo = charts.find((c) => c.chart === 'supplier-prazo')!;
      expect(Number(prazo.yMax)).toBe(both.max);
    } finally {
      await dashboard.close();
    }
  }, 60_000);

  it('in the HTML report, the two panels of each metric share one y axis', async () => {
    const html = renderDashboardPage(reportDashboardData(withColumns(recorded, ['naive', 'prazo'])), false);
    const charts = await open((page) => page.setContent(html), 'drill-report-scale.png');
    expectSharedAxes(charts, ['naive', 'prazo']);
    expectReadableLabels(charts);
  }, 60_000);

  it('with --peers, every column of a metric shares the y axis, in the report', async () => {
    const html = renderDashboardPage(reportDashboardData(recorded), false);
    const charts = await open((page) => page.setContent(html), 'drill-report-peers-scale.png');
    expectSharedAxes(charts, recorded.columns);
    expectReadableLabels(charts);
  }, 60_000);
});
