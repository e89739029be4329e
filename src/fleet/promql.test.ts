import { describe, expect, it } from 'vitest';
import {
  bucketIncreaseQuery,
  classicSeriesQuery,
  countQuery,
  type FleetHistogram,
  processTimeoutQuery,
  promDuration,
  quantileQuery,
  requestOutcomeQuery,
} from './promql.js';

const h: FleetHistogram = {
  metric: 'prazo_attempt_duration_seconds',
  matchers: [{ name: 'dependency', op: '=', value: 'payments' }],
};

describe('PromQL of the fleet reads', () => {
  it.each([
    [30_000, '30s'],
    [60_000, '60s'],
    [1_500, '1500ms'],
    [999.6, '1s'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(promDuration(ms)).toBe(text);
  });

  it.each([
    [
      'the p99 a Grafana panel shows (classic)',
      quantileQuery(h, 'classic', 0.99, 60_000),
      'histogram_quantile(0.99, sum by (le) (rate(prazo_attempt_duration_seconds_bucket{dependency="payments"}[60s])))',
    ],
    [
      'the p99 over a native histogram',
      quantileQuery(h, 'native', 0.99, 60_000),
      'histogram_quantile(0.99, sum(rate(prazo_attempt_duration_seconds{dependency="payments"}[60s])))',
    ],
    [
      'the calls per bucket per step (classic)',
      bucketIncreaseQuery(h, 'classic', 30_000),
      'sum by (le) (increase(prazo_attempt_duration_seconds_bucket{dependency="payments"}[30s]))',
    ],
    [
      'the calls per step (native)',
      bucketIncreaseQuery(h, 'native', 30_000),
      'sum(increase(prazo_attempt_duration_seconds{dependency="payments"}[30s]))',
    ],
    [
      'the failed calls of another histogram',
      countQuery({ metric: 'http_client_request_duration_seconds', matchers: [] }, 'classic', 30_000, [
        { name: 'status_code', op: '=~', value: '5..' },
      ]),
      'sum(increase(http_client_request_duration_seconds_count{status_code=~"5.."}[30s]))',
    ],
    [
      'the failed calls of a native histogram',
      countQuery({ metric: 'x_seconds', matchers: [] }, 'native', 30_000, [
        { name: 'error', op: '=', value: 'true' },
      ]),
      'sum(histogram_count(increase(x_seconds{error="true"}[30s])))',
    ],
    [
      "prazo's requests by outcome",
      requestOutcomeQuery(h.matchers, 30_000),
      'sum by (outcome) (increase(prazo_requests_total{dependency="payments"}[30s]))',
    ],
    [
      'whether classic buckets exist',
      classicSeriesQuery(h, 3_600_000),
      'count(last_over_time(prazo_attempt_duration_seconds_bucket{dependency="payments",le!=""}[3600s]))',
    ],
    [
      "each process's read timeout",
      processTimeoutQuery(h.matchers),
      'max by (instance, job) (prazo_timeout_seconds{dependency="payments",phase="read"})',
    ],
  ])('writes %s', (_what, query, expected) => {
    expect(query).toBe(expected);
  });

  it('escapes label values', () => {
    const q = bucketIncreaseQuery(
      { metric: 'm', matchers: [{ name: 'a', op: '=', value: 'x"y\\z' }] },
      'classic',
      1000,
    );
    expect(q).toBe('sum by (le) (increase(m_bucket{a="x\\"y\\\\z"}[1s]))');
  });
});
