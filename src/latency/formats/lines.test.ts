import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { createLinesParser } from './lines.js';

const feed = (text: string) => {
  const parser = createLinesParser('lat.txt');
  text.split('\n').forEach((line, i) => {
    parser.line(line, i + 1);
  });
  return parser.end();
};

describe('lines format', () => {
  it('reads one latency in milliseconds per line into one untimed slice', () => {
    const parsed = feed('12\n15.5\n\n# a comment\n 200 \n');
    expect(parsed.timed).toBe(false);
    expect(parsed.slices).toHaveLength(1);
    expect(parsed.slices[0]).toMatchObject({ count: 3, errors: 0 });
    expect(parsed.slices[0]!.histogram.max).toBeCloseTo(200, 0);
  });

  it('names the file, the line and the value that is not a latency', () => {
    expect(() => feed('12\n13\nabc\n')).toThrow('lat.txt:3: latency "abc" is not a number');
    expect(() => feed('12\n-4\n')).toThrow('lat.txt:2: latency "-4" is out of range');
    expect(() => feed('0x10\n')).toThrow('lat.txt:1');
    expect(() => feed('Infinity\n')).toThrow('lat.txt:1');
  });

  it('rejects a file with no latency at all', () => {
    expect(() => feed('\n# nothing\n')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });

  it('throws nothing but InvalidInputError, whatever the lines', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.double().map(String)), { maxLength: 5 }), (lines) => {
        try {
          feed(lines.join('\n'));
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
        return true;
      }),
      { numRuns: 10_000 },
    );
  });
});
