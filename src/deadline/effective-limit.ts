import { InvalidOptionError } from '../errors.js';

/**
 * The limit a call runs under: the **earliest** of the call's own limit `explicitMs` and the
 * ambient one `ambientMs` (`withDeadline`, a server adapter), or `defaultMs` (now + the dependency's
 * `userDeadlineMs`) when neither is set, capped at `capMs` (now + `localMaxMs`, the latest limit
 * this service agrees to hold a call for). Every instant is in epoch ms. An explicit deadline can
 * shorten the time a call gets, never lengthen it: a child only tightens its parent. Pure; its
 * inputs are arguments rather than one object, as it runs once per call.
 *
 * @throws {@link InvalidOptionError} (`deadline.limitMs`) when the explicit limit is not a finite
 *   number >= 0 — `NaN`, a numeric string, `Infinity` are refused rather than silently defaulted.
 * @example
 * effectiveLimitMs(now + 2000, now + 300, now + 1000, now + 5000); // → now + 300
 * @see Go's `context.WithDeadline`: "no later than d"; DESIGN.md "Deadlines only tighten".
 */
export function effectiveLimitMs(
  explicitMs: number | undefined,
  ambientMs: number | undefined,
  defaultMs: number,
  capMs: number,
): number {
  let limit: number;
  if (explicitMs !== undefined) {
    checkLimitMs('deadline.limitMs', explicitMs);
    limit = ambientMs !== undefined && ambientMs < explicitMs ? ambientMs : explicitMs;
  } else {
    limit = ambientMs ?? defaultMs;
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
