import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAscii, writeAscii } from './ascii.js';

describe('the layer’s ASCII strings', () => {
  it('tells ASCII from anything else, every UTF-16 code unit included', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.string({
        unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
        maxLength: 150,
      }),
      // Long ASCII with one other code unit somewhere (the UTF-8 length's path).
      fc
        .tuple(fc.nat(200), fc.integer({ min: 0x80, max: 0xffff }))
        .map(([at, c]) => `${'a'.repeat(at)}${String.fromCharCode(c)}${'b'.repeat(70)}`),
      fc.nat(300).map((n) => 'z'.repeat(n)),
      fc.string({ maxLength: 200 }),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        const reference = [...text].every((ch) => ch.charCodeAt(0) < 0x80 && ch.length === 1);
        expect(isAscii(text)).toBe(reference);
      }),
    );
    expect(isAscii('\u0080')).toBe(false);
    expect(isAscii('\u007f\u0000')).toBe(true);
  });

  it('writes an ASCII string’s bytes, short (a loop) or long (Buffer#write), into bytes or a Buffer', () => {
    const ascii = fc.string({
      unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
      maxLength: 300,
    });
    fc.assert(
      fc.property(ascii, fc.nat(16), fc.boolean(), (text, at, asBuffer) => {
        const size = at + text.length + 4;
        const out = asBuffer ? Buffer.alloc(size, 0xee) : new Uint8Array(size).fill(0xee);
        writeAscii(out, text, at);
        const expected = new Uint8Array(size).fill(0xee);
        expected.set(Buffer.from(text, 'latin1'), at);
        expect([...out]).toEqual([...expected]);
      }),
    );
  });

  it('writes into a view that starts inside its buffer', () => {
    const whole = new Uint8Array(200);
    const view = whole.subarray(50, 150);
    writeAscii(view, 'x'.repeat(60), 10);
    expect(whole.indexOf(120)).toBe(60);
    expect(whole.lastIndexOf(120)).toBe(119);
  });
});
