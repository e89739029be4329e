import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_IDEMPOTENCY_KEY_LENGTH,
  mintIdempotencyKey,
  parseIdempotencyKey,
  readIdempotencyKey,
  serializeIdempotencyKey,
} from './idempotency-key-header.js';
import { hashKey } from './key-hash.js';

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
});
const usableKey = printable.filter((k) => k.trim() !== '');

describe('parseIdempotencyKey', () => {
  it('reads back every printable key it serialised as an sf-string', () => {
    fc.assert(
      fc.property(usableKey, (key) => {
        expect(parseIdempotencyKey(serializeIdempotencyKey(key))).toEqual({ ok: true, key });
      }),
    );
  });

  it('ignores structured-field parameters and surrounding spaces', () => {
    fc.assert(
      fc.property(
        usableKey,
        fc.constantFrom('', ';a', ';a=1', '; v="x\\"y"', ';a=?1;b=tok'),
        (key, params) => {
          expect(parseIdempotencyKey(`  ${serializeIdempotencyKey(key)}${params} `)).toEqual({
            ok: true,
            key,
          });
        },
      ),
    );
  });

  it('takes a bare token (Stripe-style) as it is', () => {
    const token = fc.string({
      unit: fc
        .integer({ min: 0x21, max: 0x7e })
        .filter((c) => c !== 34 && c !== 44 && c !== 59 && c !== 92)
        .map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 64,
    });
    fc.assert(
      fc.property(token, (key) => {
        expect(parseIdempotencyKey(key)).toEqual({ ok: true, key });
      }),
    );
  });

  it('never throws, and refuses with a reason whatever it cannot use', () => {
    const anything = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.constantFrom('"', '""', '"a', '"a\\n"', '"a"b', '"a",b', 'a b', 'a,b', '\u00e9'),
    );
    fc.assert(
      fc.property(anything, (value) => {
        const parsed = parseIdempotencyKey(value as string);
        expect(parsed).toBeDefined();
        if (parsed!.ok) {
          expect(parsed!.key.trim()).not.toBe('');
          expect(parsed!.key.length).toBeLessThanOrEqual(MAX_IDEMPOTENCY_KEY_LENGTH);
        } else expect(['empty', 'malformed', 'too-long', 'repeated']).toContain(parsed!.problem);
      }),
    );
  });

  it('refuses the malformed, the empty, the too long and the repeated', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('"open')).toEqual({ ok: false, problem: 'malformed' });
    expect(parseIdempotencyKey('"a\\x"')).toEqual({ ok: false, problem: 'malformed' });
    expect(parseIdempotencyKey('"a" trailing')).toEqual({ ok: false, problem: 'malformed' });
    expect(parseIdempotencyKey('a b')).toEqual({ ok: false, problem: 'malformed' });
    expect(parseIdempotencyKey('""')).toEqual({ ok: false, problem: 'empty' });
    expect(parseIdempotencyKey('   ')).toEqual({ ok: false, problem: 'empty' });
    expect(parseIdempotencyKey(`"${'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1)}"`)).toEqual({
      ok: false,
      problem: 'too-long',
    });
    expect(parseIdempotencyKey(['"a"', '"b"'])).toEqual({ ok: false, problem: 'repeated' });
    expect(parseIdempotencyKey(['"a"'])).toEqual({ ok: true, key: 'a' });
  });
});

describe('readIdempotencyKey, the server layer reader', () => {
  it('gives the verdict parseIdempotencyKey gives, and for a key its hash and where it was read', () => {
    const anything = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      usableKey.map(serializeIdempotencyKey),
      fc
        .tuple(usableKey, fc.constantFrom('', ';a', '; v="x\\"y"'), fc.constantFrom('', ' ', '\t '))
        .map(([key, params, pad]) => `${pad}${serializeIdempotencyKey(key)}${params}${pad}`),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(anything, (value) => {
        const read = readIdempotencyKey(value);
        const parsed = parseIdempotencyKey(value);
        if (read === undefined || !read.ok) {
          expect(read).toEqual(parsed);
          return;
        }
        expect(parsed).toEqual({ ok: true, key: read.key });
        // The hash is the store's hash of the key, and the key's characters are where it says.
        expect(read.hash).toBe(hashKey(read.key));
        expect(read.text.slice(read.from, read.from + read.key.length)).toBe(read.key);
      }),
    );
  });

  it('reads a key with escapes, and a bare token, the same way', () => {
    const escaped = readIdempotencyKey('"a\\"b\\\\c"');
    expect(escaped).toMatchObject({ ok: true, key: 'a"b\\c', hash: hashKey('a"b\\c') });
    const bare = readIdempotencyKey('  order-42 ');
    expect(bare).toMatchObject({ ok: true, key: 'order-42', hash: hashKey('order-42'), from: 2 });
  });
});

describe('mintIdempotencyKey', () => {
  it('mints a random UUID as an sf-string, a new one each time', () => {
    const a = mintIdempotencyKey();
    const b = mintIdempotencyKey();
    expect(a).not.toBe(b);
    const parsed = parseIdempotencyKey(a);
    expect(parsed).toMatchObject({ ok: true });
    expect((parsed as { key: string }).key).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('serialises only what an sf-string can carry', () => {
    expect(serializeIdempotencyKey('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(() => serializeIdempotencyKey('é')).toThrow(TypeError);
  });
});
