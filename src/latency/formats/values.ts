import { InvalidInputError } from '../../errors.js';
import { MAX_DURATION_MS } from '../../policy/calibrate.js';

/** Where a value came from, for error messages (`file:line`). */
export interface Where {
  source: string;
  line: number;
}

// A plain decimal number: no hex, no `Infinity`, no empty string (all of which `Number()` accepts).
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;

/** Parses a plain decimal number, or returns `undefined`. */
export function parseDecimal(text: string): number | undefined {
  const trimmed = text.trim();
  if (!DECIMAL.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Parses a latency (`scale` converts the file's unit to milliseconds).
 *
 * @throws {InvalidInputError} naming the file, line and value when it is not a number from 0 to
 *   {@link MAX_DURATION_MS} ms.
 */
export function parseLatencyMs(text: string, where: Where, scale = 1, what = 'latency'): number {
  const value = parseDecimal(text);
  if (value === undefined) throw new InvalidInputError(`${what} ${quote(text)} is not a number`, where);
  const ms = value * scale;
  if (ms < 0 || ms > MAX_DURATION_MS) {
    throw new InvalidInputError(`${what} ${quote(text)} is out of range (0 to ${MAX_DURATION_MS} ms)`, where);
  }
  return ms;
}

/**
 * Parses a timestamp: a number is taken as milliseconds (epoch or any other fixed origin: only
 * differences matter for slicing); otherwise an ISO 8601 date-time.
 *
 * @throws {InvalidInputError} naming the file, line and value.
 */
export function parseTimestampMs(text: string, where: Where): number {
  const trimmed = text.trim();
  const number = parseDecimal(trimmed);
  if (number !== undefined) return number;
  const parsed = ISO_DATE.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw new InvalidInputError(
      `timestamp ${quote(text)} is neither epoch milliseconds nor an ISO 8601 date-time`,
      where,
    );
  }
  return parsed;
}

const ERROR_WORDS = new Set([
  'error',
  'err',
  'errors',
  'fail',
  'failed',
  'failure',
  'timeout',
  'timedout',
  'timed_out',
  'timed-out',
  'refused',
  'reset',
  '5xx',
]);

/**
 * Whether a status/outcome cell marks a failed call: an HTTP status ≥ 500, or a word such as `error`,
 * `timeout`, `failed` (case-insensitive). Anything else — `ok`, `success`, 2xx–4xx, an empty cell — is
 * a call the server answered.
 */
export function isErrorStatus(text: string): boolean {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === '') return false;
  const number = parseDecimal(trimmed);
  if (number !== undefined) return number >= 500;
  return ERROR_WORDS.has(trimmed);
}

/** Quotes a value for an error message, shortened so one bad line cannot flood the terminal. */
export function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(short);
}
