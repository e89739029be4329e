import { InvalidOptionError } from '../errors.js';

/** What {@link effectiveLimitMs} combines. Every instant is in epoch ms. */
export interface LimitInputs {
  /** The call's own `deadline.limitMs`, if it has one. */
  explicitMs: number | undefined;
  /** The ambient deadline's limit (`withDeadline`, a server adapter), if there is one. */
  ambientMs: number | undefined;
  /** The limit when neither of the above is set (now + the dependency's `userDeadlineMs`). */
  defaultMs: number;
  /** The latest limit this service agrees to hold a call for (now + `localMaxMs`). */
  capMs: number;
}

/**
 * The limit a call runs under: the **earliest** of the explicit and the ambient limit (the
 * default when neither is set), capped at `capMs`. An explicit deadline can shorten the time a call
 * gets, never lengthen it: a child only tightens its parent. Pure.
 *
 * @throws {@link InvalidOptionError} (`deadline.limitMs`) when the explicit limit is not a finite
 *   number >= 0 — `NaN`, a numeric string, `Infinity` are refused rather than silently defaulted.
 * @example
 * effectiveLimitMs({ explicitMs: now + 2000, ambientMs: now + 300, defaultMs: now + 1000, capMs: now + 5000 })
 * // → now + 300
 * @see Go's `context.WithDeadline`: "no later than d"; DESIGN.md "Deadlines only tighten".
 */
export function effectiveLimitMs(inputs: LimitInputs): number {
  const { explicitMs, ambientMs, capMs } = inputs;
  let limit: number;
  if (explicitMs !== undefined) {
    checkLimitMs('deadline.limitMs', explicitMs);
    limit = ambientMs !== undefined && ambientMs < explicitMs ? ambientMs : explicitMs;
  } else {
    limit = ambientMs ?? inputs.defaultMs;
  }
  return Math.min(limit, capMs);
}

/**
 * Refuses a limit that is not a finite epoch-ms number >= 0.
 * @throws {@link InvalidOptionError} naming `option`.
 */
export function checkLimitMs(option: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new InvalidOptionError(option, 'a finite epoch-ms number >= 0', value);
}
