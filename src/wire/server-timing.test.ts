import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DependencyWait,
  formatHopTiming,
  type HopTiming,
  MAX_HOP_DEPENDENCIES,
  MAX_HOP_DEPTH,
  MAX_SERVER_TIMING_LENGTH,
  MAX_SERVER_TIMING_METRICS,
  parseServerTiming,
  readHopTiming,
} from './server-timing.js';

describe('parseServerTiming', () => {
  it('reads the W3C examples: names alone, dur, desc as a token or a quoted-string', () => {
    expect(parseServerTiming('miss, db;dur=53, app;dur=47.2').metrics).toEqual([
      { name: 'miss', durMs: undefined, desc: undefined },
      { name: 'db', durMs: 53, desc: undefined },
      { name: 'app', durMs: 47.2, desc: undefined },
    ]);
    expect(parseServerTiming('cache;desc="Cache Read";dur=23.2').metrics).toEqual([
      { name: 'cache', durMs: 23.2, desc: 'Cache Read' },
    ]);
    expect(parseServerTiming(' total ; dur = 123.4 ; desc = "a \\"quoted\\" \\\\ one"').metrics).toEqual([
      { name: 'total', durMs: 123.4, desc: 'a "quoted" \\ one' },
    ]);
  });

  it('joins repeated headers, and keeps the first dur and desc of a metric', () => {
    const parsed = parseServerTiming(['a;dur=1', 'b;dur=2;dur=3;desc=x;desc=y']);
    expect(parsed.metrics).toEqual([
      { name: 'a', durMs: 1, desc: undefined },
      { name: 'b', durMs: 2, desc: 'x' },
    ]);
    expect(parsed.problem).toBeNull();
  });

  it('skips a malformed metric, keeps the others, and says why', () => {
    const parsed = parseServerTiming('a;dur=1, ;;, b;desc="open, c;dur=oops, d;dur=4');
    expect(parsed.metrics.map((m) => m.name)).toEqual(['a']);
    expect(parsed.problem).toBe('malformed');
    const next = parseServerTiming('a;dur=1, b c, d;dur=4');
    expect(next.metrics.map((m) => [m.name, m.durMs])).toEqual([
      ['a', 1],
      ['d', 4],
    ]);
    expect(next.problem).toBe('malformed');
    expect(parseServerTiming('x;dur=NaN').metrics).toEqual([
      { name: 'x', durMs: undefined, desc: undefined },
    ]);
  });

  it('ignores a header longer than the limit whole, and metrics beyond the count', () => {
    expect(parseServerTiming('a'.repeat(MAX_SERVER_TIMING_LENGTH + 1))).toEqual({
      metrics: [],
      problem: 'too-long',
    });
    const many = Array.from({ length: 100 }, (_, i) => `m${i};dur=${i}`).join(',');
    const parsed = parseServerTiming(many);
    expect(parsed.metrics).toHaveLength(MAX_SERVER_TIMING_METRICS);
    expect(parsed.problem).toBe('too-many');
    expect(parseServerTiming(['a', 7])).toEqual({ metrics: [], problem: 'malformed' });
    expect(parseServerTiming({ toString: () => 'a' })).toEqual({ metrics: [], problem: 'malformed' });
    expect(parseServerTiming(undefined)).toEqual({ metrics: [], problem: null });
  });

  it('never throws and stays bounded, whatever the value (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 6000 }),
          fc.string({ unit: 'binary', maxLength: 500 }),
          fc.array(fc.string({ maxLength: 200 }), { maxLength: 40 }),
          fc.stringMatching(/^[a-z;=",\\ \t.0-9-]{0,300}$/),
          fc.anything(),
        ),
        (value) => {
          const parsed = parseServerTiming(value);
          expect(parsed.metrics.length).toBeLessThanOrEqual(MAX_SERVER_TIMING_METRICS);
          for (const m of parsed.metrics) {
            expect(m.name.length).toBeGreaterThan(0);
            if (m.durMs !== undefined) expect(Number.isFinite(m.durMs)).toBe(true);
          }
          const reading = readHopTiming(value);
          expect(countHops(reading.hop)).toBeLessThanOrEqual(MAX_SERVER_TIMING_METRICS + 1);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads back what a well-formed header says (property)', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
    const metric = fc.record({
      name: token,
      durMs: fc.option(
        fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 10),
        { nil: undefined },
      ),
      desc: fc.option(fc.string({ maxLength: 20 }).filter(isPrintable), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(metric, { maxLength: 20 }), (metrics) => {
        const text = metrics
          .map(
            (m) =>
              m.name +
              (m.desc === undefined ? '' : `;desc="${m.desc.replace(/["\\]/g, '\\$&')}"`) +
              (m.durMs === undefined ? '' : `;dur=${m.durMs}`),
          )
          .join(', ');
        const parsed = parseServerTiming(text);
        expect(parsed.problem).toBeNull();
        expect(parsed.metrics).toEqual(metrics);
      }),
    );
  });
});

describe("prazo's metrics in Server-Timing", () => {
  it('writes a hop and the hops below it, and reads the same tree back (property)', () => {
    fc.assert(
      fc.property(hopArbitrary(MAX_HOP_DEPTH - 1), (hop) => {
        const header = formatHopTiming(hop);
        // Whatever the tree, what prazo writes is read whole (the writer leaves out what would not fit).
        expect(parseServerTiming(header).problem).toBeNull();
        expect(readHopTiming(header).problem).toBeNull();
        // A tree that fits reads back as it was written.
        // (No metric of these trees is longer than 200 characters.)
        fc.pre(
          parseServerTiming(header).metrics.length < MAX_SERVER_TIMING_METRICS &&
            header.length <= MAX_SERVER_TIMING_LENGTH - 200,
        );
        const reading = readHopTiming(header);
        expect(reading.problem).toBeNull();
        expect(reading.hop).toEqual(normalised(hop));
      }),
      { numRuns: 300 },
    );
  });

  it('writes names a header can carry: no `>` (the path separator), no control characters', () => {
    const header = formatHopTiming({
      leftMs: 10,
      queuedMs: 0,
      handlerMs: 5,
      dependencies: [{ name: 'a>b\n"c"', waitedMs: 3, hop: null }],
    });
    expect(header).toBe(
      'prazo-left;dur=10, prazo-queue;dur=0, prazo-handler;dur=5, prazo-wait;desc="a_b_\\"c\\"";dur=3',
    );
    expect(readHopTiming(header).hop?.dependencies[0]?.name).toBe('a_b_"c"');
  });

  it('ignores prazo metrics with a bad dur, too deep or too many, with the reason', () => {
    expect(readHopTiming('prazo-handler;dur=-4').problem).toBe('bad-value');
    expect(readHopTiming('prazo-handler').problem).toBe('bad-value');
    expect(readHopTiming('prazo-wait;dur=4').problem).toBe('malformed');
    expect(
      readHopTiming(
        `prazo-handler;desc="${Array(MAX_HOP_DEPTH + 1)
          .fill('x')
          .join('>')}";dur=1`,
      ),
    ).toEqual({
      hop: null,
      problem: 'too-deep',
    });
    const wide = Array.from(
      { length: MAX_HOP_DEPENDENCIES + 3 },
      (_, i) => `prazo-wait;desc=d${i};dur=1`,
    ).join(',');
    const reading = readHopTiming(wide);
    expect(reading.hop?.dependencies).toHaveLength(MAX_HOP_DEPENDENCIES);
    expect(reading.problem).toBe('too-many');
    // Other tools' metrics are no problem: a server not on prazo is one opaque interval.
    expect(readHopTiming('db;dur=53, app;dur=47.2')).toEqual({ hop: null, problem: null });
  });
});

function isPrintable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c === 127) return false;
  }
  return true;
}

function countHops(hop: HopTiming | null): number {
  if (hop === null) return 0;
  let n = 1;
  for (const wait of hop.dependencies) n += countHops(wait.hop);
  return n;
}

const duration = fc.integer({ min: 0, max: 100_000 }).map((n) => n / 10);

function hopArbitrary(depth: number): fc.Arbitrary<HopTiming> {
  const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
  const below: fc.Arbitrary<HopTiming | null> =
    depth === 0 ? fc.constant(null) : fc.option(hopArbitrary(depth - 1), { nil: null, freq: 2 });
  const wait: fc.Arbitrary<DependencyWait> = fc.record({ name, waitedMs: duration, hop: below });
  return fc.record({
    leftMs: fc.option(
      fc.integer({ min: -5000, max: 100_000 }).map((n) => n / 10),
      { nil: undefined },
    ),
    queuedMs: fc.option(duration, { nil: undefined }),
    handlerMs: fc.option(duration, { nil: undefined }),
    dependencies: fc.uniqueArray(wait, {
      maxLength: depth === MAX_HOP_DEPTH - 1 ? 3 : 2,
      selector: (w) => w.name,
    }),
  });
}

/** A hop as it reads back: one with no metric and no dependency says nothing (null). */
function normalised(hop: HopTiming | null): HopTiming | null {
  if (hop === null) return null;
  if (
    hop.leftMs === undefined &&
    hop.queuedMs === undefined &&
    hop.handlerMs === undefined &&
    hop.dependencies.length === 0
  )
    return null;
  return {
    ...hop,
    dependencies: hop.dependencies.map((w) => ({ ...w, hop: normalised(w.hop) })),
  };
}
