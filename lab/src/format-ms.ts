/**
 * Milliseconds as a deadline ledger's summary writes them (`1 234 ms`: whole, thin-spaced
 * thousands), so the drill's waterfall reads like the ledger beside it.
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
