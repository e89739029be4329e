import { InvalidOptionError } from 'prazo';

/**
 * Checks for the options of a simulator scenario: each names the option it rejects, with the
 * expected value, as `InvalidOptionError` (the CLI turns the name into its flag).
 */
export interface ScenarioOptionChecks<O> {
  /** The merged options: the defaults, overridden by every option given and not undefined. */
  readonly options: O;
  /** Requires `options[key]` to be a finite number for which `ok` holds. */
  number(key: keyof O & string, ok: (v: number) => boolean, expected: string): void;
  /** Requires `options[key]` to be an integer from `min` to `max`. */
  integer(key: keyof O & string, min: number, max: number, expected?: string): void;
  /** Requires `options[key]` to be a non-empty list of `names`. */
  oneOrMore(key: keyof O & string, names: readonly string[]): void;
}

/** Merges `given` over `defaults` and returns the checks to run on the result. */
export function scenarioOptionChecks<O extends object>(
  defaults: Readonly<O>,
  given: Partial<O>,
): ScenarioOptionChecks<O> {
  const options = { ...defaults } as O;
  const record = options as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) if (value !== undefined) record[key] = value;
  const number = (key: string, ok: (v: number) => boolean, expected: string) => {
    const v = record[key];
    if (!(typeof v === 'number' && Number.isFinite(v) && ok(v)))
      throw new InvalidOptionError(key, expected, v);
  };
  return {
    options,
    number,
    integer: (key, min, max, expected = `an integer between ${min} and ${max}`) =>
      number(key, (v) => Number.isInteger(v) && v >= min && v <= max, expected),
    oneOrMore(key, names) {
      const v = record[key];
      if (!Array.isArray(v) || v.length === 0 || v.some((s) => !names.includes(s)))
        throw new InvalidOptionError(key, `a non-empty list of ${names.join(', ')}`, v);
    },
  };
}
