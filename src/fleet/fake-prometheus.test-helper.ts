import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PrometheusUnavailableError } from '../errors.js';
import { parseApiAnswer, parseMatrix, parseVector } from './api-response.js';
import type { PrometheusApi } from './prometheus-api.js';

/** One step of a scripted fleet: calls per classic bucket (not cumulative), by upper bound in seconds. */
export interface ScriptedStep {
  endMs: number;
  /** Calls per bucket, keyed by `le` as Prometheus writes it (`"0.05"`, `"+Inf"`). */
  buckets: Record<string, number>;
  failures?: number;
  /** What `histogram_quantile(0.99, …)` answers for the step. @default "0.05" */
  p99?: string;
}

/** An answer of the fake API: HTTP status and body text. */
export interface FakeAnswer {
  status: number;
  body: string;
}

/** What a fake API is asked: the path and the form fields. */
export interface FakeRequest {
  path: string;
  query: string;
  time?: string;
  start?: string;
  end?: string;
  step?: string;
}

export const ok = (data: unknown): FakeAnswer => ({
  status: 200,
  body: JSON.stringify({ status: 'success', data }),
});
export const matrix = (result: unknown[]): FakeAnswer => ok({ resultType: 'matrix', result });
export const vector = (result: unknown[]): FakeAnswer => ok({ resultType: 'vector', result });

/**
 * Answers prazo's queries for a classic histogram with the scripted steps (calls per bucket, failures,
 * the server's p99), as a Prometheus holding that fleet would.
 */
export function classicFleet(steps: readonly ScriptedStep[], processTimeouts: Record<string, number> = {}) {
  return (req: FakeRequest): FakeAnswer => {
    const q = req.query;
    const t = (ms: number) => ms / 1000;
    if (q.startsWith('count(last_over_time(') && q.includes('_bucket'))
      return vector([{ metric: {}, value: [0, '12'] }]);
    if (q.startsWith('sum by (le) (increase(')) {
      const les = [...new Set(steps.flatMap((s) => Object.keys(s.buckets)))].sort(
        (a, b) => leValue(a) - leValue(b),
      );
      return matrix(
        les.map((le) => ({
          metric: { le },
          values: steps.map((s) => {
            const cumulative = les
              .filter((other) => leValue(other) <= leValue(le))
              .reduce((sum, other) => sum + (s.buckets[other] ?? 0), 0);
            return [t(s.endMs), String(cumulative)];
          }),
        })),
      );
    }
    if (q.startsWith('sum by (outcome) (increase(')) {
      const total = (s: ScriptedStep) => Object.values(s.buckets).reduce((a, b) => a + b, 0);
      return matrix([
        {
          metric: { outcome: 'success' },
          values: steps.map((s) => [t(s.endMs), String(total(s) - (s.failures ?? 0))]),
        },
        { metric: { outcome: 'failure' }, values: steps.map((s) => [t(s.endMs), String(s.failures ?? 0)]) },
      ]);
    }
    if (q.startsWith('sum(increase(') && q.includes('_count')) {
      return matrix([{ metric: {}, values: steps.map((s) => [t(s.endMs), String(s.failures ?? 0)]) }]);
    }
    if (q.startsWith('histogram_quantile(')) {
      return matrix([{ metric: {}, values: steps.map((s) => [t(s.endMs), s.p99 ?? '0.05']) }]);
    }
    if (q.startsWith('max by (')) {
      return vector(
        Object.entries(processTimeouts).map(([instance, seconds]) => ({
          metric: { instance, job: 'checkout' },
          value: [0, String(seconds)],
        })),
      );
    }
    return {
      status: 400,
      body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: `unscripted: ${q}` }),
    };
  };
}

function leValue(le: string): number {
  return le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
}

/** A real node:http server on 127.0.0.1:0 speaking the shape of the Prometheus HTTP API. */
export async function startFakePrometheus(answer: (req: FakeRequest) => FakeAnswer | 'hang'): Promise<{
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}> {
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const request = { path: req.url ?? '', query: form['query'] ?? '', ...form } as FakeRequest;
      requests.push(request);
      const a = answer(request);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * An in-memory {@link PrometheusApi} over the same answer function, through the same parsing (for
 * unit tests on a fake clock). `gate` holds answers back until it resolves.
 */
export function memoryApi(
  answer: (req: FakeRequest) => FakeAnswer,
  gate: () => Promise<void> = () => Promise.resolve(),
): PrometheusApi & { requests: FakeRequest[]; signals: AbortSignal[] } {
  const url = 'http://prometheus.test:9090';
  const requests: FakeRequest[] = [];
  const signals: AbortSignal[] = [];
  const run = async (req: FakeRequest, signal: AbortSignal | undefined) => {
    requests.push(req);
    if (signal) signals.push(signal);
    await new Promise<void>((resolve, reject) => {
      signal?.addEventListener(
        'abort',
        () => reject(new PrometheusUnavailableError('the read was cancelled', { url, query: req.query })),
        { once: true },
      );
      gate().then(resolve, reject);
    });
    const a = answer(req);
    return parseApiAnswer(a.status, a.body, { url, query: req.query }).data;
  };
  return {
    url,
    requests,
    signals,
    async query(query, options = {}) {
      const data = await run({ path: '/api/v1/query', query }, options.signal);
      return parseVector(data, { url, query });
    },
    async queryRange(query, range, options = {}) {
      const data = await run(
        {
          path: '/api/v1/query_range',
          query,
          start: String(range.startMs / 1000),
          end: String(range.endMs / 1000),
        },
        options.signal,
      );
      return parseMatrix(data, { url, query });
    },
  };
}
