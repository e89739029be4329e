import { type CliIo, EXIT } from '@prazo/cli-kit';
import { InvalidOptionError, isPrazoError } from '../errors.js';

// The argument helpers the lab's commands use too (parseFlags, unknownOption, joinNegativeValues)
// are @prazo/cli-kit's (packages/cli-kit); these are the library's commands' own.

const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m)?$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

/**
 * Parses a duration flag: a plain number of milliseconds (`1500`), or with a unit (`250ms`, `1.5s`,
 * `2m`). Returns `undefined` when the flag is absent.
 *
 * @throws {InvalidOptionError} naming the flag when the text is not such a duration.
 */
export function durationFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = DURATION.exec(text.trim());
  if (match === null && DURATION.test(text.trim().replace(/^-\s*/, '')))
    throw new InvalidOptionError(`--${flag}`, 'a duration > 0 such as 1500, 250ms or 1.5s', text);
  if (match === null)
    throw new InvalidOptionError(`--${flag}`, 'a duration such as 1500, 250ms or 1.5s', text);
  return Number(match[1]) * UNIT_MS[(match[2] ?? 'ms') as keyof typeof UNIT_MS];
}

/**
 * Parses a numeric flag (a plain decimal number). Returns `undefined` when the flag is absent.
 *
 * @throws {InvalidOptionError} naming the flag when the text is not a number.
 */
export function numberFlag(
  flag: string,
  text: string | undefined,
  expected = 'a number',
): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  const value = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isFinite(value)) throw new InvalidOptionError(`--${flag}`, expected, text);
  return value;
}

/**
 * Parses a fraction flag: `0.05` or `5%`. Returns `undefined` when the flag is absent.
 *
 * @throws {InvalidOptionError} naming the flag when the text is not a fraction from 0 to 1.
 */
export function fractionFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const percent = text.trim().endsWith('%');
  const value = numberFlag(flag, percent ? text.trim().slice(0, -1) : text, 'a fraction such as 0.05 or 5%');
  const fraction = percent ? value! / 100 : value!;
  if (fraction < 0 || fraction > 1)
    throw new InvalidOptionError(`--${flag}`, 'a fraction from 0 to 1 (or 0% to 100%)', text);
  return fraction;
}

/** Renames library option names in a prazo error message to the CLI flags that feed them. */
export function withFlagNames(message: string, flags: Readonly<Record<string, string>>): string {
  return message.replace(/`([A-Za-z0-9_.]+)`/g, (whole, name: string) => {
    const flag = flags[name];
    return flag === undefined ? whole : `\`--${flag}\``;
  });
}

/**
 * Runs a command body and turns a prazo error (bad flag, bad file) into one line on stderr and exit
 * code 2. Anything else is a bug and propagates with its stack.
 */
export async function runCommand(
  name: string,
  io: CliIo,
  flags: Readonly<Record<string, string>>,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (isPrazoError(error, 'INVALID_OPTION') || isPrazoError(error, 'INVALID_INPUT')) {
      io.stderr.write(`prazo ${name}: ${withFlagNames(error.message.replace(/\s*\n\s*/g, ' '), flags)}\n`);
      return EXIT.badInput;
    }
    throw error;
  }
}

/** Formats milliseconds for a table: whole numbers as is, others with one decimal. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Math.abs(value) >= 1000 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded.toLocaleString('en-US')} ms`;
}

/** Formats a configured duration: whole seconds as `60 s`, anything else in ms. */
export function duration(valueMs: number): string {
  return valueMs >= 1000 && valueMs % 1000 === 0 ? `${valueMs / 1000} s` : ms(valueMs);
}

/** Formats a count with thousands separators. */
export function count(value: number): string {
  return Math.round(value * 10) / 10 === Math.round(value)
    ? Math.round(value).toLocaleString('en-US')
    : (Math.round(value * 10) / 10).toLocaleString('en-US');
}

/** Formats a fraction as a percentage with one decimal. */
export function percent(fraction: number): string {
  return `${(Math.round(fraction * 1000) / 10).toFixed(1)} %`;
}
