import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { formatLabelMatchers, type LabelMatcher, parseLabelMatchers } from './label-matchers.js';

describe('parseLabelMatchers', () => {
  it.each<[string, LabelMatcher[]]>([
    ['', []],
    ['job="checkout"', [{ name: 'job', op: '=', value: 'checkout' }]],
    ['{job="checkout"}', [{ name: 'job', op: '=', value: 'checkout' }]],
    [
      ` job = "a" , route=~'/api/.*',code!="500", x!~"y" `,
      [
        { name: 'job', op: '=', value: 'a' },
        { name: 'route', op: '=~', value: '/api/.*' },
        { name: 'code', op: '!=', value: '500' },
        { name: 'x', op: '!~', value: 'y' },
      ],
    ],
    ['a="say \\"hi\\"\\n"', [{ name: 'a', op: '=', value: 'say "hi"\n' }]],
    ['a="x",', [{ name: 'a', op: '=', value: 'x' }]],
  ])('reads %j', (text, expected) => {
    expect(parseLabelMatchers(text)).toEqual(expected);
  });

  it.each([
    ['="x"', 'a label name at character 1'],
    ['job', 'one of = != =~ !~'],
    ['job=checkout', 'a quoted value'],
    ['job="checkout', 'a closing "'],
    ['a="x" b="y"', 'a comma'],
    ['1a="x"', 'a label name'],
  ])('refuses %j, saying it expected %s', (text, expected) => {
    try {
      parseLabelMatchers(text);
      expect.unreachable();
    } catch (error) {
      expect(isPrazoError(error, 'INVALID_INPUT')).toBe(true);
      expect((error as Error).message).toContain(expected);
      expect((error as Error).message).toMatch(/^--match: /);
    }
  });

  const matcher = fc.record({
    name: fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,8}$/),
    op: fc.constantFrom('=', '!=', '=~', '!~' as const),
    value: fc.string({ maxLength: 12 }),
  }) as fc.Arbitrary<LabelMatcher>;

  it('reads back what it writes', () => {
    fc.assert(
      fc.property(fc.array(matcher, { maxLength: 5 }), (matchers) => {
        expect(parseLabelMatchers(formatLabelMatchers(matchers))).toEqual(matchers);
      }),
    );
  });

  it('throws only its typed error on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          parseLabelMatchers(text);
        } catch (error) {
          expect(isPrazoError(error, 'INVALID_INPUT')).toBe(true);
        }
      }),
    );
  });
});
