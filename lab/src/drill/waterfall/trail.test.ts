import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeSpan,
  joinTrail,
  MAX_TRAIL_LENGTH,
  MAX_TRAIL_SPANS,
  parseTrail,
  type TrailSpan,
  traceSpans,
} from './trail.js';

const span = (hop: string, startMs: number, durationMs: number): TrailSpan => ({
  hop,
  kind: 'hop',
  startMs,
  durationMs,
  note: '',
});

describe("the drill's trail header", () => {
  it('carries each service’s spans up the chain, its own first', () => {
    const inventory = joinTrail([span('inventory', 1_000.04, 250)], undefined);
    const orders = joinTrail([span('orders', 999, 252.5)], inventory);
    expect(parseTrail(orders)).toEqual([span('orders', 999, 252.5), span('inventory', 1_000, 250)]);
  });

  it('drops a value that is not a trail, too long, or made of spans of the wrong shape — never throws', () => {
    expect(parseTrail(undefined)).toEqual([]);
    expect(parseTrail(['a'])).toEqual([]);
    expect(parseTrail('not json')).toEqual([]);
    expect(parseTrail(`${encodeSpan(span('a', 1, 1))},`.repeat(MAX_TRAIL_LENGTH / 10))).toEqual([]);
    expect(parseTrail('["a","nope",1,1,""],["b","hop",1,-1,""],["c","hop",1,1,""]')).toEqual([
      span('c', 1, 1),
    ]);
    expect(parseTrail('{"a":1}')).toEqual([]);
  });

  it('reads at most the first spans of a long trail, and never writes one longer than it reads', () => {
    const many = Array.from({ length: 100 }, (_, i) => span('x', i, 1));
    expect(parseTrail(joinTrail(many, undefined))).toHaveLength(MAX_TRAIL_SPANS);
    const below = 'x'.repeat(MAX_TRAIL_LENGTH);
    expect(joinTrail([span('orders', 1, 1)], below)).toBe(encodeSpan(span('orders', 1, 1)));
  });

  it('never throws on any input (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.anything()), (value) => {
        const spans = parseTrail(value);
        expect(spans.length).toBeLessThanOrEqual(MAX_TRAIL_SPANS);
      }),
    );
  });

  it('lays out the attempts a client reported, with the gaps between them inferred', () => {
    const spans = traceSpans('inventory', {
      attempts: [
        { kind: 'original', endMs: 1_252, durationMs: 252, ok: false },
        { kind: 'retry', endMs: 1_600, durationMs: 300, ok: true },
      ],
    });
    expect(spans.map((s) => [s.kind, s.startMs, s.durationMs, s.note])).toEqual([
      ['attempt', 1_000, 252, '#1 original failed'],
      ['gap', 1_252, 48, ''],
      ['attempt', 1_300, 300, '#2 retry ok'],
    ]);
  });
});
