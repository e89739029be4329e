import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { createCsvParser, splitCsvLine } from './csv.js';

const feed = (text: string, options: { sliceMs?: number; latencyColumn?: string } = {}) => {
  const parser = createCsvParser('calls.csv', { sliceMs: options.sliceMs ?? 60_000, ...options });
  text.split('\n').forEach((line, i) => {
    parser.line(line, i + 1);
  });
  return parser.end();
};

describe('csv format', () => {
  it('finds the latency, timestamp and status columns by name, in any order', () => {
    const parsed = feed(
      'status,extra,latency_ms,timestamp\n200,x,10,0\n503,y,900,1000\ntimeout,z,1500,2000\n',
    );
    expect(parsed.timed).toBe(true);
    expect(parsed.slices).toHaveLength(1);
    expect(parsed.slices[0]).toMatchObject({ startMs: 0, endMs: 60_000, count: 3, errors: 2 });
    expect(parsed.notes).toEqual([]);
  });

  it.each(['latency_ms', 'latency', 'duration_ms', 'Duration', 'ms', 'latencyMs', 'elapsed_ms'])(
    'accepts %s as the latency column in milliseconds',
    (name) => {
      const parsed = feed(`${name}\n42\n`);
      expect(parsed.slices[0]!.histogram.max).toBeCloseTo(42, 0);
    },
  );

  it('converts a latency column in seconds to milliseconds', () => {
    expect(feed('duration_seconds\n0.25\n').slices[0]!.histogram.max).toBeCloseTo(250, 0);
  });

  it('uses a latency column named by the caller', () => {
    expect(feed('t;rtt\n1;42\n', { latencyColumn: 'rtt' }).slices[0]!.histogram.max).toBeCloseTo(42, 0);
    expect(() => feed('t,rtt\n1,42\n', { latencyColumn: 'nope' })).toThrow('no column named "nope"');
  });

  it('cuts timestamped rows into slices aligned on the slice length, in any order', () => {
    const parsed = feed(
      'timestamp,latency_ms\n2026-12-02T12:01:30Z,20\n2026-12-02T12:00:10Z,10\n2026-12-02T12:00:59.999Z,11\n',
    );
    const minute = Date.parse('2026-12-02T12:00:00Z');
    expect(parsed.slices.map((s) => [s.startMs - minute, s.count])).toEqual([
      [0, 2],
      [60_000, 1],
    ]);
  });

  it('reads epoch-millisecond timestamps', () => {
    const parsed = feed('ts,latency\n1764676800000,5\n1764676810000,6\n1764676870000,7\n', {
      sliceMs: 60_000,
    });
    expect(parsed.slices.map((s) => s.count)).toEqual([2, 1]);
  });

  it('counts statuses of 500 and above and words like error or timeout as errors', () => {
    const rows = ['200', '404', '499', '500', '503', 'error', 'TIMEOUT', 'failed', 'ok', 'success', '']
      .map((s) => `5,${s}`)
      .join('\n');
    expect(feed(`latency_ms,outcome\n${rows}\n`).slices[0]!.errors).toBe(5);
  });

  it('notes when there is no timestamp or status column', () => {
    expect(feed('latency_ms\n5\n').notes).toEqual([
      'no timestamp column: all rows form one slice',
      'no status column: every row counts as a success',
    ]);
  });

  it('reads quoted fields and tab-separated files', () => {
    expect(feed('"name","latency_ms"\n"a, b",7\n').slices[0]!.count).toBe(1);
    expect(feed('latency_ms\tstatus\n7\t200\n').slices[0]!.count).toBe(1);
    expect(splitCsvLine('"a ""q"" b",c', ',', { source: 's', line: 1 })).toEqual(['a "q" b', 'c']);
  });

  describe('names the file, the line and the value', () => {
    it.each([
      ['timestamp,latency_ms\n2026-12-02T12:00:00Z,12\nyesterday,13\n', 'calls.csv:3: timestamp "yesterday"'],
      ['timestamp,latency_ms\n0,12\n1,slow\n', 'calls.csv:3: latency "slow" is not a number'],
      ['timestamp,latency_ms\n0,12\n1\n', 'calls.csv:3: row has 1 field'],
      ['when,what\n0,12\n', 'calls.csv:1: the header ("when", "what") names no latency column'],
      ['latency_ms\n"12\n', 'calls.csv:2: unterminated quoted field'],
      ['latency_ms\n', 'calls.csv: the CSV has a header but no rows'],
      ['\n', 'calls.csv: empty CSV'],
    ])('%j', (text, message) => {
      expect(() => feed(text)).toThrow(message);
    });
  });

  it('throws nothing but InvalidInputError on arbitrary rows after a valid header', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 4 }), (rows) => {
        try {
          feed(`timestamp,latency_ms,status\n${rows.join('\n')}`);
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
        return true;
      }),
      { numRuns: 10_000 },
    );
  });

  it('throws nothing but InvalidInputError on arbitrary files built from CSV-ish pieces', () => {
    const piece = fc.constantFrom(
      'latency_ms',
      'timestamp',
      'status',
      ',',
      ';',
      '"',
      '\n',
      '12',
      '-1',
      'x',
      '2026-12-02T12:00:00Z',
      '503',
      ' ',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        try {
          feed(pieces.join(''));
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
        return true;
      }),
      { numRuns: 10_000 },
    );
  });
});
