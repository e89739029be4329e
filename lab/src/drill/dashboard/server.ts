import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from '../../http-module.js';
import { overloadHeading, overloadRows } from '../../overload/overload-table.js';
import type { NormalizedDrillOptions } from '../drill-options.js';
import { fleetInstanceLabels, type Phase } from '../phase-plan.js';
import type { DrillReport } from '../report/drill-report.js';
import { reportRows } from '../report/table.js';
import type { DrillContext } from '../run-drill.js';
import { renderWaterfallsHtml } from '../waterfall/render.js';
import type { DashboardData } from './client.js';
import { createDrillMetrics, type DrillMetrics } from './drill-metrics.js';
import { renderDashboardPage } from './page.js';

/** The page's data: the live timeline, and the summary once the report exists. */
export function dashboardData(context: DrillContext, report: DrillReport | null): DashboardData {
  if (report) return reportDashboardData(report);
  const columns = [...context.recorder.configs];
  const samples: DashboardData['samples'] = {};
  for (const config of columns) samples[config] = context.recorder.samples(config).map((s) => ({ ...s }));
  return {
    ...timelineData(columns, context.phases, context.options, context.recorder.sampleMs, samples),
    done: false,
    elapsedMs: context.elapsedMs(),
    summary: null,
    comparison: [],
    tradeOffs: [],
    checks: null,
    overload: null,
    waterfallsHtml: renderWaterfallsHtml(context.waterfalls?.() ?? [], columns),
  };
}

/**
 * The page's data from a finished drill's report alone (`prazo drill --json` holds it): what the HTML
 * report draws.
 */
export function reportDashboardData(report: DrillReport): DashboardData {
  const columns = [...report.columns];
  const samples: DashboardData['samples'] = {};
  for (const config of columns)
    samples[config] = (report.timeline.samples[config] ?? []).map((s) => ({ ...s }));
  return {
    ...timelineData(columns, report.phases, report.options, report.timeline.sampleMs, samples),
    done: true,
    elapsedMs: report.durationMs,
    summary: reportRows(report),
    comparison: report.peerComparison,
    tradeOffs: report.tradeOffs ?? [],
    checks: report.checks,
    waterfallsHtml: renderWaterfallsHtml(report.waterfalls?.run ?? [], columns),
    overload:
      report.overload != null && report.overload.length > 0
        ? {
            heading: overloadHeading(report.overload),
            configs: report.overload.map((f) => f.config),
            goodputShares: report.overload.map((f) => f.goodputShare),
            rows: overloadRows(report.overload),
          }
        : null,
  };
}

function timelineData(
  columns: string[],
  phases: readonly Phase[],
  options: NormalizedDrillOptions,
  sampleMs: number,
  samples: DashboardData['samples'],
) {
  return {
    title:
      columns.length > 2
        ? `prazo drill — ${columns.join(', ')} under a degrading dependency`
        : 'prazo drill — naive vs prazo under a degrading dependency',
    totalMs: phases[phases.length - 1]!.endMs,
    sampleMs,
    poolSize: options.pool,
    retryRatioAlert: options.retryRatioAlert,
    phases: [...phases],
    samples,
    instanceLabels: fleetInstanceLabels(options),
    columns,
  };
}

/** The live dashboard server. */
export interface DashboardServer {
  readonly url: string;
  /** Attaches the running drill (before it, the page shows an empty timeline). */
  attach(context: DrillContext): void;
  /** Publishes the finished report (the page then shows the summary and stops polling). */
  finish(report: DrillReport): void;
  close(): Promise<void>;
}

/**
 * Serves the live dashboard on 127.0.0.1: `/` (the page), `/data` (its JSON) and `/metrics`
 * (Prometheus text format, from a prom-client registry).
 */
export async function startDashboardServer(port = 0): Promise<DashboardServer> {
  let context: DrillContext | undefined;
  let report: DrillReport | null = null;
  const metrics: DrillMetrics | null = await createDrillMetrics();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/data') {
      if (!context) return send(503, 'application/json', '{"error":"starting"}');
      return send(200, 'application/json', JSON.stringify(dashboardData(context, report)));
    }
    if (path === '/metrics') {
      if (!metrics) return send(501, 'text/plain', 'prom-client is not installed\n');
      if (context) metrics.update(context);
      Promise.all([metrics.text(), context ? context.serviceMetrics() : ''])
        .then(([own, services]) => (services ? `${own}\n${services}` : own))
        .then(
          (text) => send(200, metrics.contentType, text),
          (error: unknown) => send(500, 'text/plain', String(error)),
        );
      return;
    }
    if (path === '/' || path === '/index.html') {
      const data = context ? dashboardData(context, report) : null;
      return send(200, 'text/html; charset=utf-8', renderDashboardPage(data ?? emptyData(), true));
    }
    send(404, 'text/plain', 'not found\n');
  });
  server.keepAliveTimeout = 2_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/`,
    attach(c) {
      context = c;
    },
    finish(r) {
      report = r;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function emptyData(): DashboardData {
  return {
    title: 'prazo drill — starting',
    done: false,
    elapsedMs: 0,
    totalMs: 1,
    sampleMs: 500,
    poolSize: 0,
    retryRatioAlert: 0,
    phases: [],
    samples: {},
    summary: null,
    checks: null,
  };
}
