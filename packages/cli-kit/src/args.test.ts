import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinNegativeValues } from './args.js';

const FLAGS = { p99: { type: 'string' }, json: { type: 'boolean' } } as const;

describe('joinNegativeValues', () => {
  it('joins a string flag and the negative number after it, and nothing else', () => {
    expect(joinNegativeValues(['--p99', '-5', '--json'], FLAGS)).toEqual(['--p99=-5', '--json']);
    expect(joinNegativeValues(['--p99', '-.5s'], FLAGS)).toEqual(['--p99=-.5s']);
    expect(joinNegativeValues(['--json', '-5'], FLAGS)).toEqual(['--json', '-5']);
    expect(joinNegativeValues(['--p99', '-h'], FLAGS)).toEqual(['--p99', '-h']);
  });

  it('keeps every argument, in order, whatever the argument list', () => {
    const arg = fc.oneof(
      fc.constantFrom('--p99', '--json', '-h', '-5', '-0.1', '--', '--p99=-1'),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 12 }), (argv) => {
        const joined = joinNegativeValues(argv, FLAGS);
        expect(joined.join('\u0000').replaceAll('=', '\u0000')).toBe(
          argv.join('\u0000').replaceAll('=', '\u0000'),
        );
      }),
    );
  });
});
