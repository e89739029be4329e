import { InvalidOptionError } from '../errors.js';
import { integerIn, nonNegativeMs } from '../option-checks.js';

/** Input of {@link backoffDelayMs}. */
export interface BackoffInput {
  /** 0 for the first retry, 1 for the second … */
  retryIndex: number;
  /** Ceiling of the first retry's delay, in ms. @default 50 */
  baseMs?: number;
  /** Largest ceiling, in ms, however many retries came before. @default 2000 */
  capMs?: number;
  /** Uniform source in [0, 1); values outside are clamped. @default Math.random */
  random?: () => number;
}

/** Defaults of {@link backoffDelayMs}. */
export const BACKOFF_DEFAULTS: Readonly<{ baseMs: number; capMs: number }> = Object.freeze({
  baseMs: 50,
  capMs: 2000,
});

/**
 * Delay before retry number `retryIndex + 1`: exponential backoff with full jitter, a whole number
 * of ms drawn uniformly from `[0, min(capMs, baseMs × 2^retryIndex))`.
 *
 * Full jitter spreads the retries of many clients that failed together over the whole interval, so
 * they do not come back as a synchronised wave. Connect-phase failures and `Retry-After` waits do
 * not use it (see `planRetry`).
 *
 * @throws {@link InvalidOptionError} when `retryIndex` is not an integer ≥ 0, or `baseMs` / `capMs`
 *   is not a finite number ≥ 0.
 * @example
 * backoffDelayMs({ retryIndex: 2, random: () => 0.5 }); // 100 (half of min(2000, 50 × 4))
 * @see AWS Architecture Blog, "Exponential Backoff And Jitter" (full jitter).
 */
export function backoffDelayMs(input: BackoffInput): number {
  const { retryIndex } = input;
  const baseMs = input.baseMs ?? BACKOFF_DEFAULTS.baseMs;
  const capMs = input.capMs ?? BACKOFF_DEFAULTS.capMs;
  const random = input.random ?? Math.random;
  integerIn('retryIndex', retryIndex, 0, Number.POSITIVE_INFINITY, 'an integer ≥ 0');
  nonNegativeMs('backoff.baseMs', baseMs);
  nonNegativeMs('backoff.capMs', capMs);
  if (typeof random !== 'function') {
    throw new InvalidOptionError('random', 'a function returning a number in [0, 1)', random);
  }
  // 2^1023 is the largest finite power; beyond it the cap decides anyway (and 0 × Infinity is NaN).
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(retryIndex, 1023));
  const r = random();
  const unit = r > 0 ? Math.min(r, 1) : 0;
  return Math.min(Math.floor(unit * ceiling), Math.max(0, Math.ceil(ceiling) - 1));
}
