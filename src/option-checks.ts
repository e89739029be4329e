/**
 * The checks every options normaliser is made of: each takes the option's full name as the message
 * gives it (`'balancer.decayMs'`, `'throttle.k'`), the value, and returns the value typed, or throws
 * {@link InvalidOptionError} naming the option and what it expects. One copy of each rule, so the
 * same kind of option is refused with the same words everywhere.
 */
import { InvalidOptionError } from './errors.js';

/** Bounds of a number option; every bound given must hold. */
export interface NumberRange {
  /** The smallest value accepted. */
  min?: number;
  /** Values must be above this one (an open lower bound). */
  above?: number;
  /** The largest value accepted. */
  max?: number;
  /** Values must be below this one (an open upper bound). */
  below?: number;
}

/**
 * `value` when it is a finite number within `range`.
 * @throws {InvalidOptionError} `name` must be `expected`.
 */
export function numberIn(name: string, value: unknown, range: NumberRange, expected: string): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (range.min !== undefined && value < range.min) ||
    (range.above !== undefined && value <= range.above) ||
    (range.max !== undefined && value > range.max) ||
    (range.below !== undefined && value >= range.below)
  )
    throw new InvalidOptionError(name, expected, value);
  return value;
}

/**
 * `value` when it is a finite number > 0.
 * @throws {InvalidOptionError} `name` must be `expected` (by default "a finite number > 0").
 */
export function positive(name: string, value: unknown, expected = 'a finite number > 0'): number {
  return numberIn(name, value, { above: 0 }, expected);
}

/**
 * `value` when it is a finite number ≥ 0.
 * @throws {InvalidOptionError} `name` must be `expected` (by default "a finite number ≥ 0").
 */
export function nonNegative(name: string, value: unknown, expected = 'a finite number ≥ 0'): number {
  return numberIn(name, value, { min: 0 }, expected);
}

/**
 * `value` when it is a duration: a finite number of ms > 0.
 * @throws {InvalidOptionError} `name` must be "a finite number of ms > 0".
 */
export function positiveMs(name: string, value: unknown): number {
  return positive(name, value, 'a finite number of ms > 0');
}

/**
 * `value` when it is a finite number of ms ≥ 0.
 * @throws {InvalidOptionError} `name` must be "a finite number of ms ≥ 0".
 */
export function nonNegativeMs(name: string, value: unknown): number {
  return nonNegative(name, value, 'a finite number of ms ≥ 0');
}

/**
 * `value` when it is an integer from `min` to `max`.
 * @throws {InvalidOptionError} `name` must be `expected` (by default "an integer from min to max").
 */
export function integerIn(
  name: string,
  value: unknown,
  min: number,
  max: number,
  expected = `an integer from ${min} to ${max}`,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new InvalidOptionError(name, expected, value);
  return value;
}

/**
 * `value` when it is a boolean.
 * @throws {InvalidOptionError} `name` must be "a boolean".
 */
export function boolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidOptionError(name, 'a boolean', value);
  return value;
}

/**
 * Passes when `value` is an object (not null).
 * @throws {InvalidOptionError} `name` must be `expected` (by default "an object").
 */
export function objectOption(name: string, value: unknown, expected = 'an object'): asserts value is object {
  if (typeof value !== 'object' || value === null) throw new InvalidOptionError(name, expected, value);
}

/**
 * The name under which a normaliser reports its options object itself: the path without its trailing
 * dot (`'throttle.'` → `'throttle'`), or `'options'` at the top.
 */
export function pathName(optionPath: string): string {
  return optionPath.replace(/\.$/, '') || 'options';
}
