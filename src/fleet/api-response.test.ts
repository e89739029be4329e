import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError, type PrometheusErrorCode } from '../errors.js';
import { parseApiAnswer, parseMatrix, parseSampleValue, parseVector } from './api-response.js';

const context = { url: 'http://prometheus.test:9090', query: 'up' };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isPrazoError(error) ? error.code : `untyped: ${String(error)}`;
  }
  return undefined;
}

describe('parseApiAnswer', () => {
  it('returns the data and the warnings of a success', () => {
    const body = JSON.stringify({
      status: 'success',
      data: { resultType: 'vector', result: [] },
      warnings: ['w'],
    });
    expect(parseApiAnswer(200, body, context)).toEqual({
      data: { resultType: 'vector', result: [] },
      warnings: ['w'],
    });
  });

  it.each<[string, number, string, PrometheusErrorCode, RegExp]>([
    [
      'status: error (bad query)',
      400,
      JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }),
      'PROMETHEUS_QUERY_ERROR',
      /refused the query \(bad_data\): parse error at char 5/,
    ],
    [
      'status: error on a 200',
      200,
      JSON.stringify({ status: 'error', errorType: 'timeout', error: 'query timed out' }),
      'PROMETHEUS_QUERY_ERROR',
      /\(timeout\)/,
    ],
    ['an HTTP error with a text body', 502, 'Bad Gateway', 'PROMETHEUS_HTTP_ERROR', /HTTP 502: Bad Gateway/],
    ['an HTTP error with an empty body', 503, '', 'PROMETHEUS_HTTP_ERROR', /HTTP 503: \(empty body\)/],
    [
      'a 200 that is not JSON',
      200,
      '<html>login</html>',
      'PROMETHEUS_BAD_RESPONSE',
      /not an answer of the Prometheus HTTP API/,
    ],
    ['a 200 without data', 200, JSON.stringify({ status: 'success' }), 'PROMETHEUS_BAD_RESPONSE', /expected/],
    ['a 200 JSON array', 200, '[]', 'PROMETHEUS_BAD_RESPONSE', /not an answer/],
  ])('turns %s into a typed error', (_what, status, body, code, message) => {
    try {
      parseApiAnswer(status, body, context);
      expect.unreachable();
    } catch (error) {
      expect(isPrazoError(error, code)).toBe(true);
      expect((error as Error).message).toMatch(message);
      expect((error as { url: string }).url).toBe(context.url);
      expect((error as { query: string }).query).toBe('up');
    }
  });

  it('cuts a long error body to an excerpt', () => {
    expect(() => parseApiAnswer(500, 'x'.repeat(5000), context)).toThrow(/x{200}…$/);
  });
});

describe('parseSampleValue', () => {
  it.each([
    ['1.5', 1.5],
    ['0', 0],
    ['1e-3', 0.001],
    ['NaN', Number.NaN],
    ['+Inf', Number.POSITIVE_INFINITY],
    ['-Inf', Number.NEGATIVE_INFINITY],
  ])('reads %s', (text, value) => {
    expect(parseSampleValue(text, 'v', context)).toBe(value);
  });

  it.each([[''], ['abc'], [12], [null]])('refuses %j', (text) => {
    expect(codeOf(() => parseSampleValue(text, 'v', context))).toBe('PROMETHEUS_BAD_RESPONSE');
  });

  it('reads back any number it is given as Prometheus writes it', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(parseSampleValue(String(x), 'v', context) === x).toBe(true);
      }),
    );
  });
});

describe('parseMatrix and parseVector', () => {
  it('reads float and native histogram samples, times in ms', () => {
    const series = parseMatrix(
      {
        resultType: 'matrix',
        result: [
          { metric: { le: '0.1' }, values: [[1700000000.5, '3']] },
          {
            metric: {},
            histograms: [[1700000001, { count: '4', sum: '0.2', buckets: [[0, '0.01', '0.02', '4']] }]],
          },
        ],
      },
      context,
    );
    expect(series).toEqual([
      { labels: { le: '0.1' }, values: [{ atMs: 1700000000500, value: 3 }], histograms: [] },
      {
        labels: {},
        values: [],
        histograms: [
          {
            atMs: 1700000001000,
            histogram: { count: 4, sum: 0.2, buckets: [{ lower: 0.01, upper: 0.02, count: 4 }] },
          },
        ],
      },
    ]);
    expect(
      parseVector(
        { resultType: 'vector', result: [{ metric: { instance: 'a' }, value: [1, 'NaN'] }] },
        context,
      )[0]!.value,
    ).toBeNaN();
    expect(parseVector({ resultType: 'scalar', result: [2, '7'] }, context)).toEqual([
      { labels: {}, atMs: 2000, value: 7 },
    ]);
  });

  it.each<[string, unknown]>([
    ['a vector where a matrix is due', { resultType: 'vector', result: [] }],
    ['no result array', { resultType: 'matrix', result: {} }],
    ['a sample without time', { resultType: 'matrix', result: [{ metric: {}, values: [['x', '1']] }] }],
    ['a label that is not a string', { resultType: 'matrix', result: [{ metric: { a: 1 }, values: [] }] }],
    [
      'a bucket of three fields',
      {
        resultType: 'matrix',
        result: [{ metric: {}, histograms: [[1, { count: '1', sum: '1', buckets: [[0, '1', '2']] }]] }],
      },
    ],
    ['data that is not an object', 'nope'],
  ])('refuses %s', (_what, data) => {
    expect(codeOf(() => parseMatrix(data, context))).toBe('PROMETHEUS_BAD_RESPONSE');
  });

  it('throws only typed errors for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (data) => {
        for (const parse of [parseMatrix, parseVector]) {
          const code = codeOf(() => parse(data, context));
          expect(code === undefined || code === 'PROMETHEUS_BAD_RESPONSE').toBe(true);
        }
        const code = codeOf(() => parseApiAnswer(200, JSON.stringify(data), context));
        expect(code === undefined || code.startsWith('PROMETHEUS_')).toBe(true);
      }),
    );
  });
});
