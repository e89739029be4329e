import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isPrazoError } from '../../src/errors.js';
import { createCsvParser } from '../../src/latency/formats/csv.js';
import { detectFormat } from '../../src/latency/formats/detect.js';
import { parseHistogramJson } from '../../src/latency/formats/histogram-json.js';
import { createLinesParser } from '../../src/latency/formats/lines.js';
import { createPrometheusParser } from '../../src/latency/formats/prometheus.js';
import { readLatencyFile } from '../../src/latency/formats/read-latency-file.js';
import type { LineParser, ParsedLatency } from '../../src/latency/formats/types.js';
import { selectHealthy } from '../../src/latency/healthy.js';
import { LatencyHistogram } from '../../src/latency/histogram.js';
import { numberish, RUNS } from './arbitraries.js';

const SOURCE = 'fuzz.txt';

/**
 * A file's content is either read — slices whose percentiles are finite, non-negative numbers — or
 * refused with INVALID_INPUT naming the file. Nothing else may escape.
 */
function expectReadOrRefused(read: () => ParsedLatency, source = SOURCE): void {
  let parsed: ParsedLatency;
  try {
    parsed = read();
  } catch (error) {
    if (!isPrazoError(error, 'INVALID_INPUT')) throw error;
    assert.ok((error as Error).message.startsWith(source));
    return;
  }
  for (const slice of parsed.slices) {
    assert.ok(Number.isInteger(slice.count) && slice.count >= 0);
    assert.ok(slice.errors >= 0 && slice.errors <= slice.count);
  }
  const selection = selectHealthy(parsed.slices);
  if (selection.histogram.count > 0) {
    const p99 = selection.histogram.percentile(99);
    assert.ok(Number.isFinite(p99) && p99 >= 0);
  }
}

function feed(parser: LineParser, lines: readonly string[]): ParsedLatency {
  lines.forEach((line, i) => {
    parser.line(line, i + 1);
  });
  return parser.end();
}

const latency = fc.oneof(
  fc.double({ min: 0, max: 600_000, noNaN: true }).map((v) => String(v)),
  fc.nat({ max: 10_000 }).map(String),
  fc.nat({ max: 10_000 }).map((v) => `${v}ms`),
  fc.nat({ max: 10 }).map((v) => `${v}s`),
  numberish,
);
const junk = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', '   ', '#', '# comment', '\uFEFF12', '\u0000', '"', ',,,', '\r'),
);

const linesFile = fc.array(fc.oneof({ weight: 4, arbitrary: latency }, { weight: 1, arbitrary: junk }), {
  maxLength: 12,
});

const base = 1_700_000_000_000;
const timestamp = fc.oneof(
  fc.integer({ min: 0, max: 180_000 }).map((d) => String(base + d)),
  fc.integer({ min: 0, max: 180_000 }).map((d) => new Date(base + d).toISOString()),
  fc.integer({ min: 0, max: 180 }).map((d) => String(1_700_000_000 + d)),
  numberish,
  fc.string({ maxLength: 8 }),
);
const status = fc.oneof(
  fc.constantFrom('200', '204', '500', '503', 'ok', 'error', 'timeout', 'OK', ''),
  fc.string({ maxLength: 6 }),
);
const column = fc.oneof(
  fc.constantFrom(
    'latency_ms',
    'Latency',
    'duration_seconds',
    'elapsed',
    'timestamp',
    'ts',
    'time',
    'status',
    'outcome',
    'code',
  ),
  fc.string({ maxLength: 8 }),
);
const csvFile = fc
  .tuple(
    fc.constantFrom(',', ';', '\t'),
    fc.uniqueArray(column, { minLength: 1, maxLength: 4 }),
    fc.array(fc.array(fc.oneof(latency, timestamp, status, junk), { maxLength: 5 }), { maxLength: 8 }),
    fc.boolean(),
  )
  .map(([delimiter, header, rows, quoted]) => [
    header.map((h) => (quoted ? `"${h}"` : h)).join(delimiter),
    ...rows.map((row) => row.join(delimiter)),
  ]);

const metricName = fc.constantFrom(
  'http_request_duration_seconds',
  'rpc_latency_ms',
  'db_time_milliseconds',
  'weird',
);
const le = fc.oneof(
  fc.constantFrom('0.005', '0.01', '0.1', '0.25', '1', '2.5', '10', '+Inf', 'Inf', 'NaN', '-1', ''),
  numberish,
);
const promLine = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(metricName, le, fc.nat({ max: 1000 }), fc.constantFrom('', ',route="/a"', ',route="/b"'))
      .map(([name, bound, n, extra]) => `${name}_bucket{le="${bound}"${extra}} ${n}`),
  },
  fc.tuple(metricName, fc.nat({ max: 1000 })).map(([name, n]) => `${name}_count ${n}`),
  fc.tuple(metricName, fc.double({ noNaN: true })).map(([name, n]) => `${name}_sum ${n}`),
  metricName.map((name) => `# TYPE ${name} histogram`),
  fc.tuple(metricName, junk).map(([name, j]) => `${name}_bucket{le=${j}} 1`),
  junk,
);
/** Mostly well-formed expositions (increasing bounds, cumulative counts), some shuffled or broken. */
const promFile = fc.oneof(
  fc
    .tuple(metricName, fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 8 }))
    .map(([name, increments]) => {
      let total = 0;
      const bounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
      const lines = increments.map((inc, i) => {
        total += inc;
        return `${name}_bucket{le="${bounds[i]}"} ${total}`;
      });
      return [
        `# TYPE ${name} histogram`,
        ...lines,
        `${name}_bucket{le="+Inf"} ${total}`,
        `${name}_count ${total}`,
      ];
    }),
  fc.array(promLine, { maxLength: 10 }),
);

const histogramJsonText = fc.oneof(
  fc
    .tuple(
      fc.array(fc.double({ min: 0, max: 60_000, noNaN: true }), { maxLength: 20 }),
      fc.option(
        fc.constantFrom(
          'format',
          'version',
          'unit',
          'subBucketBits',
          'count',
          'minMs',
          'maxMs',
          'sumMs',
          'buckets',
        ),
      ),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([samples, field, value]) => {
      const h = new LatencyHistogram();
      for (const s of samples) h.record(s);
      const json = h.toJSON() as unknown as Record<string, unknown>;
      if (field !== null) json[field] = value;
      return JSON.stringify(json);
    }),
  fc
    .tuple(
      fc.array(fc.tuple(fc.integer({ min: -5, max: 5000 }), fc.integer({ min: -5, max: 1e9 })), {
        maxLength: 6,
      }),
    )
    .map(([buckets]) =>
      JSON.stringify({
        format: 'prazo-histogram',
        version: 1,
        unit: 'us',
        subBucketBits: 7,
        count: 3,
        minMs: 0,
        maxMs: 1,
        sumMs: 1,
        buckets,
      }),
    ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
);

describe('fuzz: histogram files', () => {
  it('lines: a latency per line is read, anything else is INVALID_INPUT naming the file and line', () => {
    fc.assert(
      fc.property(linesFile, (lines) => expectReadOrRefused(() => feed(createLinesParser(SOURCE), lines))),
      { numRuns: RUNS },
    );
  });

  it('csv: any header, delimiter, row shape, timestamp or status', () => {
    fc.assert(
      fc.property(csvFile, (lines) =>
        expectReadOrRefused(() => feed(createCsvParser(SOURCE, { sliceMs: 60_000 }), lines)),
      ),
      { numRuns: RUNS },
    );
  });

  it('prometheus: any exposition of buckets, counts and comments', () => {
    fc.assert(
      fc.property(promFile, (lines) =>
        expectReadOrRefused(() => feed(createPrometheusParser(SOURCE), lines)),
      ),
      { numRuns: RUNS },
    );
  });

  it('histogram JSON: mutated, foreign or broken documents', () => {
    fc.assert(
      fc.property(histogramJsonText, (text) => expectReadOrRefused(() => parseHistogramJson(text, SOURCE))),
      { numRuns: RUNS },
    );
  });

  it('format detection never throws on any file head', () => {
    const head = fc.oneof(
      linesFile.map((l) => l.join('\n')),
      csvFile.map((l) => l.join('\n')),
      promFile.map((l) => l.join('\n')),
      histogramJsonText,
    );
    fc.assert(
      fc.property(fc.constantFrom('a.txt', 'a', 'a.csv', 'a.json', 'a.prom', 'a.TSV'), head, (name, text) => {
        const format = detectFormat(name, text);
        assert.ok(format === undefined || ['lines', 'csv', 'json', 'prometheus'].includes(format));
      }),
      { numRuns: RUNS },
    );
  });

  describe('through files on disk (detection, streaming, CRLF, BOM)', () => {
    let dir = '';
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prazo-fuzz-histogram-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('readLatencyFile reads or refuses with INVALID_INPUT naming the file', async () => {
      let n = 0;
      const file = fc.tuple(
        fc.oneof(
          linesFile.map((l) => l.join('\n')),
          csvFile.map((l) => l.join('\n')),
          promFile.map((l) => l.join('\n')),
          histogramJsonText,
        ),
        fc.constantFrom('.txt', '', '.csv', '.json', '.prom'),
        fc.constantFrom('', '\uFEFF'),
        fc.boolean(),
      );
      // Each run writes and reads a real file: fewer runs than the in-memory properties above,
      // which already cover the parsers 10 000 times each.
      await fc.assert(
        fc.asyncProperty(file, async ([text, ext, bom, crlf]) => {
          const path = join(dir, `f${n++}${ext}`);
          await writeFile(path, bom + (crlf ? text.replaceAll('\n', '\r\n') : text));
          try {
            const report = await readLatencyFile(path);
            if (report.selection.histogram.count > 0) {
              assert.ok(Number.isFinite(report.selection.histogram.percentile(99)));
            }
          } catch (error) {
            if (!isPrazoError(error, 'INVALID_INPUT')) throw error;
            assert.ok((error as Error).message.startsWith(path));
          } finally {
            await rm(path, { force: true });
          }
        }),
        { numRuns: 500 },
      );
    });
  });
});
