import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrument } from '../src/observe/prometheus.js';
import { createEventSourceDouble } from './support/event-source-double.js';
import { findTool } from './support/tools.js';

const prometheusBin = findTool('prometheus');
const root = join(import.meta.dirname, '..');

interface QueryResult {
  status: string;
  data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  error?: string;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** Polls `read` every 250 ms until it returns a value, for at most `limitMs`. */
async function poll<T>(read: () => Promise<T | undefined>, limitMs: number, what: string): Promise<T> {
  const until = Date.now() + limitMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const value = await read();
      if (value !== undefined) return value;
    } catch (error) {
      last = error; // Prometheus not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `Timed out after ${limitMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
  );
}

describe.skipIf(!prometheusBin)('a real Prometheus scraping an instrumented service', () => {
  let dir: string;
  let service: Server;
  let prometheus: ChildProcess | undefined;
  let api: string;
  let stderr = '';

  beforeAll(async () => {
    // The example service: one instrumented dependency, its metrics on /metrics.
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    instrument(dep, { registry });
    for (let i = 0; i < 20; i++) dep.request({ durationMs: 50 });
    dep.request({
      durationMs: 300,
      attempts: [
        { kind: 'original', durationMs: 252, timeout: 'read' },
        { kind: 'retry', durationMs: 40 },
      ],
    });
    dep.setBudget({ originals: 200, extras: 14, ratio: 0.07 });
    service = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    const servicePort = (service.address() as AddressInfo).port;

    dir = mkdtempSync(join(tmpdir(), 'prazo-prometheus-'));
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(join(root, 'alerts', 'prazo.rules.yml'))}`,
        'scrape_configs:',
        '  - job_name: prazo-example',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${servicePort}']`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}/api/v1`;
    prometheus = spawn(
      prometheusBin!,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = once(prometheus, 'exit');
      prometheus.kill('SIGTERM');
      const timer = setTimeout(() => prometheus?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (service) await new Promise((resolve) => service.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const query = async (promql: string): Promise<QueryResult> => {
    const res = await fetch(`${api}/query?query=${encodeURIComponent(promql)}`);
    return (await res.json()) as QueryResult;
  };

  it('reads the retry ratio back through the HTTP API', async () => {
    const result = await poll(
      async () => {
        const r = await query('prazo_retry_ratio');
        return r.data.result.length > 0 ? r.data.result : undefined;
      },
      20_000,
      `prazo_retry_ratio in Prometheus (stderr: ${stderr})`,
    );
    expect(result).toHaveLength(1);
    expect(result[0]!.metric).toMatchObject({ dependency: 'payments', job: 'prazo-example' });
    expect(Number(result[0]!.value[1])).toBe(0.07);

    const attempts = await query('sum by (kind) (prazo_attempts_total)');
    const byKind = Object.fromEntries(attempts.data.result.map((r) => [r.metric.kind, Number(r.value[1])]));
    expect(byKind).toEqual({ original: 21, retry: 1, hedge: 0 });
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
    expect(rules).toHaveLength(6);
    for (const rule of rules) expect(rule.health, `${rule.name}: ${rule.lastError}`).toBe('ok');
  });
});
