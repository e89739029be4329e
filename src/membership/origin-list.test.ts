import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { parseOriginList } from './origin-list.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isPrazoError(error) ? error.code : 'not a prazo error';
  }
  return undefined;
}

describe('parseOriginList', () => {
  it('normalises origins as URL.origin gives them and drops duplicates, first kept', () => {
    expect(
      parseOriginList([
        'http://127.0.0.2:8080/',
        'HTTP://127.0.0.3:8080',
        'http://127.0.0.2:8080',
        'https://[::1]:443',
      ]),
    ).toEqual(['http://127.0.0.2:8080', 'http://127.0.0.3:8080', 'https://[::1]']);
  });

  it('refuses an empty answer: no instances is a failure, never a set', () => {
    expect(() => parseOriginList([])).toThrow(/no origins/);
    expect(codeOf(() => parseOriginList([]))).toBe('INVALID_INPUT');
  });

  it('refuses what is not an array, and names the first entry that is not an origin', () => {
    expect(codeOf(() => parseOriginList('http://a:1'))).toBe('INVALID_INPUT');
    expect(codeOf(() => parseOriginList(undefined))).toBe('INVALID_INPUT');
    expect(() => parseOriginList(['http://a:1', 'ftp://b:1'])).toThrow(/Entry 1/);
    expect(() => parseOriginList(['http://a:1/path'])).toThrow(/Entry 0/);
    expect(() => parseOriginList(['http://a:1?q=1'])).toThrow(/Entry 0/);
    expect(() => parseOriginList(['http://user:pw@a:1'])).toThrow(/Entry 0/);
    expect(() => parseOriginList([42])).toThrow(/Entry 0/);
    expect(() => parseOriginList(['not a url'])).toThrow(/Entry 0/);
  });

  it('never crashes: any input yields origins or an INVALID_INPUT error', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.array(fc.oneof(fc.string(), fc.webUrl(), fc.anything()))),
        (value) => {
          try {
            const origins = parseOriginList(value);
            expect(origins.length).toBeGreaterThan(0);
            for (const origin of origins) expect(new URL(origin).origin).toBe(origin);
            expect(new Set(origins).size).toBe(origins.length);
          } catch (error) {
            expect(isPrazoError(error, 'INVALID_INPUT')).toBe(true);
          }
        },
      ),
    );
  });
});
