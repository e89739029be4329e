/**
 * The attempt header: how a prazo client tells a server which attempt of a logical request it is
 * looking at, so the server side (the double, a drill, a dashboard) can count originals, retries and
 * hedges without guessing.
 *
 * Wire format: `x-prazo-attempt: <n>;kind=<original|retry|hedge>` where `n` is the 1-based attempt
 * number within the logical request (the original is 1).
 */

/** Name of the attempt header (lower case, as Node presents incoming headers). */
export const ATTEMPT_HEADER = 'x-prazo-attempt';

/** Why an attempt was sent. */
export type AttemptKind = 'original' | 'retry' | 'hedge';

/** The kinds in a constant list, for iteration and validation. */
export const ATTEMPT_KINDS: readonly AttemptKind[] = Object.freeze(['original', 'retry', 'hedge']);

/** A decoded attempt header. */
export interface AttemptInfo {
  /** 1-based attempt number within the logical request. */
  readonly attempt: number;
  /** Why the attempt was sent. */
  readonly kind: AttemptKind;
}

/** Largest attempt number accepted; anything above is treated as malformed. */
const MAX_ATTEMPT = 1_000_000;

/**
 * Encodes an attempt header value.
 *
 * @throws RangeError when `attempt` is not an integer in [1, 1 000 000].
 * @example
 * formatAttemptHeader({ attempt: 2, kind: 'retry' }); // '2;kind=retry'
 */
export function formatAttemptHeader(info: AttemptInfo): string {
  if (!Number.isInteger(info.attempt) || info.attempt < 1 || info.attempt > MAX_ATTEMPT) {
    throw new RangeError(`attempt must be an integer in [1, ${MAX_ATTEMPT}], got ${String(info.attempt)}`);
  }
  return `${info.attempt};kind=${info.kind}`;
}

// Values of the first attempts of each kind, built once: the client sends one on every attempt.
const FIRST_VALUES = new Map<AttemptKind, readonly string[]>(
  ATTEMPT_KINDS.map((kind) => [
    kind,
    Array.from({ length: 16 }, (_, i) => formatAttemptHeader({ attempt: i + 1, kind })),
  ]),
);

/**
 * The attempt header value for attempt `attempt` of kind `kind`, as {@link formatAttemptHeader}
 * writes it; the first 16 of each kind come from a table, without building a string.
 */
export function attemptHeaderValue(attempt: number, kind: AttemptKind): string {
  return FIRST_VALUES.get(kind)![attempt - 1] ?? formatAttemptHeader({ attempt, kind });
}

const PATTERN = /^\s*([1-9][0-9]{0,6})\s*;\s*kind\s*=\s*(original|retry|hedge)\s*$/i;

/**
 * Decodes an attempt header value. Never throws: a missing, repeated or malformed header gives
 * `undefined` (the double then counts the request as an original of unknown kind).
 *
 * @param value - the raw header value as Node gives it (`string`, `string[]` or `undefined`).
 * @example
 * parseAttemptHeader('2;kind=retry'); // { attempt: 2, kind: 'retry' }
 * parseAttemptHeader('two');          // undefined
 */
export function parseAttemptHeader(value: unknown): AttemptInfo | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const match = PATTERN.exec(value);
  if (!match) return undefined;
  const attempt = Number(match[1]);
  if (attempt > MAX_ATTEMPT) return undefined;
  return { attempt, kind: match[2]!.toLowerCase() as AttemptKind };
}
