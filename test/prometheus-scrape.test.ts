import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startDouble } from '@prazo/lab/double';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { instrument } from '../src/observe/prometheus.js';
import { poll, startPrometheus, type TestPrometheus } from './support/prometheus-server.js';
import { findTool } from './support/tools.js';

const prometheusBin = findTool('prometheus');
const root = join(import.meta.dirname, '..');

interface QueryResult {
  status: string;
  data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  error?: string;
}

const skipped = prometheusBin ? '' : ' — skipped: prometheus not found (Debian: prometheus)';
describe.skipIf(!prometheusBin)(`a real Prometheus scraping an instrumented service${skipped}`, () => {
  let service: Server;
  let prometheus: TestPrometheus | undefined;
  let api: string;
  const closers: Array<{ close(): Promise<unknown> }> = [];
  const served = new Set<number>();
  const attemptsSent = { original: 0, retry: 0, hedge: 0 };
  let traffic: ReturnType<typeof setInterval> | undefined;

  beforeAll(async () => {
    // The example service: one real dependency calling a double that answers 503 to a share of calls,
    // instrumented, its metrics on /metrics.
    const double = await startDouble({ seed: 5, behaviour: { statuses: [{ status: 503, share: 0.3 }] } });
    closers.push(double);
    const dep = dependency({
      name: 'payments',
      origins: [double.url],
      latency: { p99Ms: 100 },
      userDeadlineMs: 2_000,
      attempts: 2,
    });
    closers.push(dep);
    const registry = new Registry();
    instrument(dep, { registry });
    dep.on('attempt-start', (e) => {
      attemptsSent[e.kind]++;
    });
    const call = async (): Promise<void> => {
      try {
        await (await dep.request({ path: '/' })).body.text();
      } catch {
        // a 503 twice in a row: the call fails, its attempts still count
      }
    };
    for (let i = 0; i < 40; i++) await call();
    // Light traffic keeps the 10 s budget window non-empty until Prometheus has scraped.
    traffic = setInterval(() => void call(), 100);
    service = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      served.add(dep.budget().ratio);
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    const servicePort = (service.address() as AddressInfo).port;

    prometheus = await startPrometheus({
      bin: prometheusBin!,
      job: 'prazo-example',
      targets: [`127.0.0.1:${servicePort}`],
      ruleFiles: [join(root, 'alerts', 'prazo.rules.yml')],
    });
    api = `${prometheus.url}/api/v1`;
  });

  afterAll(async () => {
    clearInterval(traffic);
    await prometheus?.stop();
    if (service) await new Promise((resolve) => service.close(resolve));
    for (const c of closers.reverse()) await c.close();
  });

  const query = async (promql: string): Promise<QueryResult> => {
    const res = await fetch(`${api}/query?query=${encodeURIComponent(promql)}`);
    return (await res.json()) as QueryResult;
  };

  it('reads the retry ratio back through the HTTP API', async () => {
    const result = await poll(
      async () => {
        const r = await query('prazo_retry_ratio > 0');
        return r.data.result.length > 0 ? r.data.result : undefined;
      },
      20_000,
      `prazo_retry_ratio in Prometheus (stderr: ${prometheus?.stderr()})`,
    );
    expect(result).toHaveLength(1);
    expect(result[0]!.metric).toMatchObject({ dependency: 'payments', job: 'prazo-example' });
    const ratio = Number(result[0]!.value[1]);
    expect(ratio).toBeGreaterThan(0);
    // what the service exposed at one of the scrapes
    expect([...served].some((v) => Math.abs(v - ratio) < 0.01)).toBe(true);

    const attempts = await query('sum by (kind) (prazo_attempts_total)');
    const byKind = Object.fromEntries(attempts.data.result.map((r) => [r.metric.kind, Number(r.value[1])]));
    // Traffic goes on between the scrape and now: Prometheus holds at most what was sent.
    expect(byKind.original).toBeGreaterThanOrEqual(40);
    expect(byKind.original).toBeLessThanOrEqual(attemptsSent.original);
    expect(byKind.retry).toBeGreaterThan(0);
    expect(byKind.retry).toBeLessThanOrEqual(attemptsSent.retry);
  });

  it('evaluates every dashboard expression without error', async () => {
    const dashboard = JSON.parse(readFileSync(join(root, 'dashboards', 'prazo.json'), 'utf8')) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    for (const expr of exprs) {
      const concrete = expr.replaceAll('$__rate_interval', '1m').replaceAll('$dependency', '.+');
      const r = await query(concrete);
      expect(r.status, `${concrete}: ${r.error}`).toBe('success');
    }
  });

  it('loads the alert rules and evaluates them without error', async () => {
    const rules = await poll(
      async () => {
        const res = await fetch(`${api}/rules`);
        const body = (await res.json()) as {
          data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> };
        };
        const all = body.data.groups.flatMap((g) => g.rules);
        return all.length > 0 && all.every((r) => r.health !== 'unknown') ? all : undefined;
      },
      20_000,
      'the alert rules to be evaluated',
    );
    expect(rules).toHaveLength(9);
    for (const rule of rules) expect(rule.health, `${rule.name}: ${rule.lastError}`).toBe('ok');
  });
});
