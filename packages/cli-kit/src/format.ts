// Imports nothing: the library's own modules use it (the deadline ledger's text), so it must not
// reach the library's entry points back (`npm run imports` checks it).

/**
 * `value` ms, rounded, with thin groups of thousands (`1 900 ms`): how the deadline ledger's text
 * writes milliseconds, and the drill's waterfall beside it.
 */
export function formatMs(value: number): string {
  const rounded = Math.round(value);
  const digits = String(Math.abs(rounded));
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ' ';
    out += digits[i];
  }
  return `${rounded < 0 ? '-' : ''}${out} ms`;
}
