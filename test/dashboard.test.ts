import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDouble } from '@prazo/lab/double';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../src/admission/admission.js';
import { dependency } from '../src/client/dependency.js';
import { Deadline } from '../src/deadline/deadline.js';
import { instrument, instrumentAdmission } from '../src/observe/prometheus.js';
import { METRICS, prometheusSeriesNames, SERVER_METRICS } from '../src/wire/metric-names.js';

interface Target {
  expr: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  fieldConfig?: {
    defaults: {
      thresholds?: { steps: Array<{ value: number | null }> };
      custom?: { thresholdsStyle?: { mode: string } };
    };
  };
}

/** Grafana replaces this placeholder with the datasource chosen at import. */
const DATASOURCE = ['$', '{DS_PROMETHEUS}'].join('');
const root = join(import.meta.dirname, '..');
const dashboard = JSON.parse(readFileSync(join(root, 'dashboards', 'prazo.json'), 'utf8')) as {
  __inputs: Array<{ name: string; type: string; pluginId: string }>;
  panels: Panel[];
  templating: { list: Array<{ name: string; definition: string; datasource: { uid: string } }> };
  uid: string;
};
const rules = readFileSync(join(root, 'alerts', 'prazo.rules.yml'), 'utf8');
const graphs = dashboard.panels.filter((p) => p.type !== 'row');
const expressions = graphs.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
const ruleExpressions = [...rules.matchAll(/expr: (?:\|\n((?: {10}.*\n)+)|(.+))/g)].map(
  (m) => m[1] ?? m[2] ?? '',
);

const metricNames = (exprs: string[]): Set<string> =>
  new Set(exprs.flatMap((e) => [...e.matchAll(/\bprazo_[a-z0-9_]+\b/g)].map((m) => m[0])));

/** The series names an instrumented real dependency exposes after some calls to a double. */
async function producedSeries(): Promise<Set<string>> {
  const double = await startDouble({ seed: 9 });
  // Two instances: with one, the balancer is skipped and holds no per-instance latency.
  const second = await startDouble({ seed: 10 });
  const dep = dependency({
    name: 'payments',
    origins: [double.url, second.url],
    latency: { p99Ms: 1000 }, // far above the double's latency: no timeout on a loaded machine
    userDeadlineMs: 2_000,
    // On, so that their gauges exist (they are absent for a dependency without them).
    concurrency: true,
    throttle: true,
  });
  try {
    const registry = new Registry();
    instrument(dep, { registry });
    // A server admission with one request admitted, one queued and one refused.
    const admission = createAdmission({ maxInFlight: 1, maxQueue: 1, minSamples: 1, refreshMs: 0 });
    instrumentAdmission(admission, { registry });
    const tickets: Array<{ release(finished: boolean): void }> = [];
    for (let i = 0; i < 3; i++)
      admission.offer(
        'GET /',
        Deadline.after(1000),
        'default',
        (t) => tickets.push(t),
        () => {},
      );
    tickets[0]?.release(true);
    tickets[1]?.release(true);
    // A fourth request reads the route's service times: its expected service time is known.
    admission.offer(
      'GET /',
      Deadline.after(1000),
      'default',
      (t) => t.release(true),
      () => {},
    );
    for (let i = 0; i < 60; i++) {
      try {
        await (await dep.request({ path: '/' })).body.text();
      } catch {
        // a failed call is still counted
      }
    }
    const text = await registry.metrics();
    return new Set([...text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)].map((m) => m[1]!));
  } finally {
    await dep.close();
    await double.close();
    await second.close();
  }
}

describe('Grafana dashboard', () => {
  it('is importable: a Prometheus datasource input that every panel and the variable use', () => {
    expect(dashboard.__inputs).toEqual([
      expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }),
    ]);
    for (const panel of graphs) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE);
      for (const t of panel.targets ?? []) expect(t.datasource.uid, panel.title).toBe(DATASOURCE);
    }
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
  });

  it('has a dependency variable fed by prazo_requests_total that every client query filters on', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'dependency');
    expect(variable?.definition).toBe('label_values(prazo_requests_total, dependency)');
    expect(variable?.datasource.uid).toBe(DATASOURCE);
    for (const expr of expressions.filter((e) => !e.includes('prazo_server_')))
      expect(expr).toContain('dependency=~"$dependency"');
  });

  it('has a route variable that every server query on a per-route metric filters on', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'route');
    expect(variable?.definition).toBe('label_values(prazo_server_admitted_total, route)');
    expect(variable?.datasource.uid).toBe(DATASOURCE);
    const perRoute = Object.values(SERVER_METRICS)
      .filter((m) => (m.labels as readonly string[]).includes('route'))
      .map((m): string => m.prometheus);
    for (const expr of expressions.filter((e) => perRoute.some((name) => e.includes(name))))
      for (const use of expr.matchAll(/prazo_server_[a-z_]+(\{[^}]*\})?/g))
        if (perRoute.includes(use[0].replace(/\{.*$/, '')))
          expect(use[1] ?? '', expr).toContain('route=~"$route"');
  });

  it('shows the server admission panels: refusals by reason, queue and CoDel state, sojourn', () => {
    const used = (name: string) => graphs.filter((p) => p.targets?.some((t) => t.expr.includes(name)));
    for (const name of Object.values(SERVER_METRICS).map((m) => m.prometheus))
      expect(used(name).length, name).toBeGreaterThan(0);
    const share = used('reason=~"queue-full|shed|queue-delay"')[0];
    const alert = Number(/prazo_server_refused_total[\s\S]*?\n\s+> ([\d.]+)\n/.exec(rules)?.[1]);
    expect(alert).toBe(0.05);
    expect(share?.fieldConfig?.defaults.thresholds?.steps.map((s) => s.value)).toEqual([null, alert]);
  });

  it('draws the retry-ratio alert thresholds on the retry ratio panel', () => {
    const panel = graphs.find((p) => p.targets?.some((t) => t.expr.includes('prazo_retry_ratio')));
    const warning = Number(/prazo_retry_ratio\) > ([\d.]+)/.exec(rules)?.[1]);
    const critical = Number(/prazo_retry_ratio\) >= ([\d.]+)/.exec(rules)?.[1]);
    expect([warning, critical]).toEqual([0.05, 0.09]);
    const steps = panel?.fieldConfig?.defaults.thresholds?.steps.map((s) => s.value);
    expect(steps).toEqual([null, warning, critical]);
    expect(panel?.fieldConfig?.defaults.custom?.thresholdsStyle?.mode).toMatch(/line/);
  });

  it('shows every panel the issue lists', () => {
    const used = (name: string) => graphs.filter((p) => p.targets?.some((t) => t.expr.includes(name)));
    expect(used('prazo_retry_ratio')).toHaveLength(1);
    expect(used('prazo_attempts_total')).toHaveLength(1);
    expect(used('prazo_retry_budget_exhausted_total')).toHaveLength(1);
    expect(used('prazo_timeouts_total')).toHaveLength(1);
    expect(used('prazo_deadline_fast_fail_total')).toHaveLength(1);
    const latency = used('prazo_timeout_seconds')[0];
    expect(latency?.targets?.map((t) => t.expr).join(' ')).toMatch(
      /histogram_quantile\(0\.5,.*histogram_quantile\(0\.99,/s,
    );
    const hedges = used('prazo_hedges_total')[0];
    expect(hedges?.targets?.map((t) => t.expr).join(' ')).toContain('prazo_hedges_won_total');
  });
});

describe('metric names in the dashboard and the alert rules', () => {
  const catalogue = new Set(
    [...Object.values(METRICS), ...Object.values(SERVER_METRICS)].flatMap((m) => prometheusSeriesNames(m)),
  );

  it('finds the expressions it checks', () => {
    expect(expressions.length).toBeGreaterThan(10);
    expect(ruleExpressions).toHaveLength(9);
  });

  it('are all in the metric catalogue', () => {
    for (const name of metricNames([...expressions, ...ruleExpressions]))
      expect(catalogue, name).toContain(name);
  });

  it('are all produced by the Prometheus exporter', async () => {
    const produced = await producedSeries();
    for (const name of metricNames([...expressions, ...ruleExpressions]))
      expect(produced, name).toContain(name);
  });

  it('cover everything the exporter produces, except what only the dashboard cannot use', async () => {
    const used = metricNames([...expressions, ...ruleExpressions]);
    const unused = [...(await producedSeries())].filter((n) => !used.has(n));
    // Sums and counts of the histograms are exported for users' own queries (averages).
    expect(unused.every((n) => /_(sum|count)$/.test(n))).toBe(true);
  });

  it('are all documented in docs/observability.md, with their OpenTelemetry names', () => {
    const docs = readFileSync(join(root, 'docs', 'observability.md'), 'utf8');
    for (const m of Object.values(METRICS)) {
      const row = new RegExp(
        `\\|\\s*\`${m.prometheus}\`\\s*\\|\\s*\`${m.otel.replaceAll('.', '\\.')}\`\\s*\\|`,
      );
      expect(docs, m.prometheus).toMatch(row);
    }
  });
});
