/**
 * The deadline header: how a caller tells a service the absolute instant its answer stops being
 * useful, and how a service reads it. Wire format: `x-deadline-epoch-ms: <integer epoch
 * milliseconds>`; `grpc-timeout` (relative) is read as a second input; the service caps either at its
 * own maximum.
 */
import { InvalidOptionError } from '../errors.js';
import { nonNegative, positive } from '../option-checks.js';

/** Name of the header that carries the caller's absolute limit, in epoch milliseconds (lower case). */
export const DEADLINE_HEADER = 'x-deadline-epoch-ms';

/** Name of the gRPC header that carries a relative timeout (`250m`, `2S` …), read as a second input. */
export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

/** A header value as Node (`string | string[] | undefined`) or a framework hands it over. */
export type HeaderValue = string | readonly string[] | undefined;

/** How a service turns an incoming deadline header into its own limit. */
export interface DeadlineHeaderOptions {
  /**
   * Time granted when the request carries no usable deadline, in milliseconds from now.
   * Held to `maxMs` when larger.
   */
  defaultMs: number;
  /**
   * The longest this service agrees to hold resources for one request, in milliseconds from now.
   * A received limit later than now + `maxMs` is capped there: a caller can ask for less time,
   * never for more.
   */
  maxMs: number;
  /**
   * Clock-skew allowance, in milliseconds: a request whose received *absolute* limit passed less than
   * `skewMs` ago is still accepted on arrival (a sender whose clock runs slightly behind ours does not
   * see its requests refused at once). It excuses the arrival check only: it is never added to the
   * limit this service honours and passes on. See docs/deadlines.md for the trade-off.
   * @default 0
   */
  skewMs?: number;
  /** The `grpc-timeout` header value, read as a relative limit from `nowMs` (see {@link parseGrpcTimeout}). */
  grpcTimeout?: HeaderValue;
}

/** The outcome of {@link parseDeadlineHeader}. */
export interface ParsedDeadline {
  /**
   * The limit this service will honour and pass on, in epoch milliseconds; never later than the
   * received limit, nor than now + `maxMs`. The skew allowance is not in it.
   */
  limitMs: number;
  /**
   * The instant after which the request counts as arrived expired: `limitMs` + `skewMs` for a limit
   * read from `x-deadline-epoch-ms`, `limitMs` otherwise. Only the arrival check uses it.
   */
  arrivalLimitMs: number;
  /** Which input produced `limitMs`. `'default'` when no input carried a usable value. */
  source: 'header' | 'grpc-timeout' | 'default';
  /** True when the local maximum shortened the limit the inputs asked for. */
  capped: boolean;
  /** Why a present value was rejected (set only when something was present and unusable). */
  invalid?: string;
}

/** At most 16 decimal digits: every epoch-ms instant until the year 318857 fits, and all are safe integers. */
const EPOCH_MS = /^\d{1,16}$/;
/** gRPC spec: `TimeoutValue` is at most 8 ASCII digits, followed by one unit letter. */
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const GRPC_UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
});

/**
 * Reads the `x-deadline-epoch-ms` header (and optionally `grpc-timeout`) into the limit this service
 * will honour. Pure: never reads the clock, never throws on any header value.
 *
 * Rules, in order:
 * 1. A header value may repeat (an array, or a comma-joined list as Node and `Headers` produce).
 *    Each item is trimmed; empty items are ignored.
 * 2. A valid item is 1–16 ASCII digits: an integer instant in epoch ms. Anything else — signs,
 *    fractions, exponents, hex, `NaN`, `Infinity`, more digits — is garbage and ignored.
 * 3. Of several valid items, the **earliest** wins (the tightest limit anyone asked for).
 * 4. A valid `grpc-timeout` gives `nowMs` + its duration; the earlier of it and the header wins.
 * 5. `skewMs` is never added to the limit: it only moves `arrivalLimitMs`, the instant after which a
 *    header limit counts as arrived expired (`grpc-timeout` is relative and immune to skew).
 * 6. With no valid input, the limit is `nowMs` + `defaultMs`, and `invalid` says what was rejected.
 * 7. Whatever the source, the limit is capped at `nowMs` + `maxMs` (`capped` says so).
 * A limit already in the past is kept as is: the request arrives expired and the server answers 504.
 *
 * @param value - The raw `x-deadline-epoch-ms` value(s).
 * @param nowMs - The current time in epoch ms.
 * @throws {@link InvalidOptionError} when an option (not a header) is unusable.
 * @example
 * parseDeadlineHeader('1700000001900', 1700000000000, { defaultMs: 1000, maxMs: 5000 });
 * // → { limitMs: 1700000001900, arrivalLimitMs: 1700000001900, source: 'header', capped: false }
 * @see The source article, "Com prazo absoluto propagado": absolute limit, local cap.
 */
export function parseDeadlineHeader(
  value: HeaderValue,
  nowMs: number,
  options: DeadlineHeaderOptions,
): ParsedDeadline {
  const normalized = normalizeDeadlineHeaderOptions(options);
  if (!Number.isFinite(nowMs)) throw new InvalidOptionError('nowMs', 'a finite epoch-ms number', nowMs);
  return parseDeadlineHeaderWith(value, options.grpcTimeout, nowMs, normalized);
}

/**
 * {@link parseDeadlineHeader} with options validated once at setup (the server adapters call it on
 * every request) and a finite `nowMs`.
 * @internal
 */
export function parseDeadlineHeaderWith(
  value: HeaderValue,
  grpcTimeout: HeaderValue,
  nowMs: number,
  options: NormalizedDeadlineHeaderOptions,
): ParsedDeadline {
  // What nearly every request carries — one instant from a prazo caller, or no deadline at all — read
  // without the general path's item list (a generator, a split, a trim per item): the server adapters
  // and the idempotency layer read the header on every request. The same result as that path.
  if (grpcTimeout === undefined) {
    if (value === undefined) return fromLimit(nowMs + options.defaultMs, 'default', nowMs, options);
    if (typeof value === 'string') {
      const limitMs = epochMsOf(value);
      if (limitMs !== -1) return fromLimit(limitMs, 'header', nowMs, options);
    }
  }
  return parseDeadlineItems(value, grpcTimeout, nowMs, options);
}

/**
 * `value` as an instant when it is one as {@link EPOCH_MS} says (1–16 ASCII digits, nothing else),
 * else -1. One pass over its characters: the expression and `Number()` took ≈ 900 instructions for a
 * 13-digit instant on Node 24 (V8's regular-expression builtin and its string-to-double conversion).
 * The sum is `Number(value)` exactly: below 2⁵³ every step is exact, and a 16th digit multiplies a
 * sum below 10¹⁵ by 10 (an even integer below 2⁵⁴, exact too) before one addition rounds, as
 * `Number()` rounds once.
 */
function epochMsOf(value: string): number {
  const n = value.length;
  if (n === 0 || n > 16) return -1;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    sum = sum * 10 + digit;
  }
  return sum;
}

/**
 * The limit `limitMs` read from `source`, capped at `nowMs` + `maxMs` (rule 7), the skew allowance
 * moving the arrival check of a header's limit only (rule 5): both paths of the parse end here.
 */
function fromLimit(
  limitMs: number,
  source: ParsedDeadline['source'],
  nowMs: number,
  { maxMs, skewMs }: NormalizedDeadlineHeaderOptions,
): ParsedDeadline {
  const capMs = nowMs + maxMs;
  const capped = limitMs > capMs;
  if (capped) limitMs = capMs;
  return {
    limitMs,
    arrivalLimitMs: source === 'header' && !capped ? limitMs + skewMs : limitMs,
    source,
    capped,
  };
}

/**
 * {@link parseDeadlineHeaderWith} by the rules alone, item by item: any value, any `grpc-timeout`.
 * @internal Exported for the test that holds the fast path to it.
 */
export function parseDeadlineItems(
  value: HeaderValue,
  grpcTimeout: HeaderValue,
  nowMs: number,
  options: NormalizedDeadlineHeaderOptions,
): ParsedDeadline {
  const rejected: string[] = [];
  let headerLimit: number | undefined;
  for (const item of items(value)) {
    if (EPOCH_MS.test(item)) {
      const limit = Number(item);
      if (headerLimit === undefined || limit < headerLimit) headerLimit = limit;
    } else {
      rejected.push(`${DEADLINE_HEADER}: ${quote(item)} is not an integer epoch-ms instant`);
    }
  }

  let grpcLimit: number | undefined;
  if (grpcTimeout !== undefined) {
    const timeoutMs = parseGrpcTimeout(grpcTimeout);
    if (timeoutMs === undefined) {
      const present = [...items(grpcTimeout)];
      if (present.length > 0)
        rejected.push(`${GRPC_TIMEOUT_HEADER}: ${quote(present.join(', '))} is not a gRPC timeout`);
    } else {
      grpcLimit = nowMs + timeoutMs;
    }
  }

  let limitMs: number;
  let source: ParsedDeadline['source'];
  if (headerLimit !== undefined && (grpcLimit === undefined || headerLimit <= grpcLimit)) {
    limitMs = headerLimit;
    source = 'header';
  } else if (grpcLimit !== undefined) {
    limitMs = grpcLimit;
    source = 'grpc-timeout';
  } else {
    limitMs = nowMs + options.defaultMs;
    source = 'default';
  }

  const result = fromLimit(limitMs, source, nowMs, options);
  if (source === 'default' && rejected.length > 0) result.invalid = rejected.join('; ');
  return result;
}

/**
 * Parses a `grpc-timeout` value (1–8 digits, not all zero, and a unit: `H` hours, `M` minutes,
 * `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds) into milliseconds, rounded down.
 * A zero value is malformed (gRPC requires a positive timeout).
 * Returns `undefined` for a missing or malformed value; of several valid values, the shortest.
 * Never throws.
 *
 * @example parseGrpcTimeout('250m') // → 250
 * @example parseGrpcTimeout('2S') // → 2000
 * @see https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md (Timeout)
 */
export function parseGrpcTimeout(value: HeaderValue): number | undefined {
  let best: number | undefined;
  for (const item of items(value)) {
    const match = GRPC_TIMEOUT.exec(item);
    // gRPC requires a positive TimeoutValue: "0m" is malformed, not "already expired".
    if (!match || Number(match[1]) === 0) continue;
    const ms = Math.floor(Number(match[1]) * (GRPC_UNIT_MS[match[2]!] ?? Number.NaN));
    if (Number.isFinite(ms) && (best === undefined || ms < best)) best = ms;
  }
  return best;
}

/** Validated {@link DeadlineHeaderOptions} with defaults applied. */
export interface NormalizedDeadlineHeaderOptions {
  defaultMs: number;
  maxMs: number;
  skewMs: number;
}

/**
 * Validates the options of {@link parseDeadlineHeader} and applies defaults; `defaultMs` is held to `maxMs`.
 * @throws {@link InvalidOptionError} naming the option.
 */
export function normalizeDeadlineHeaderOptions(options: {
  defaultMs: number;
  maxMs: number;
  skewMs?: number;
}): NormalizedDeadlineHeaderOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object with defaultMs and maxMs', options);
  const { defaultMs, maxMs, skewMs = 0 } = options;
  positive('maxMs', maxMs, 'a finite number of milliseconds > 0');
  positive('defaultMs', defaultMs, 'a finite number of milliseconds > 0');
  nonNegative('skewMs', skewMs, 'a finite number of milliseconds >= 0');
  return { defaultMs: Math.min(defaultMs, maxMs), maxMs, skewMs };
}

function* items(value: HeaderValue): Generator<string> {
  if (value === undefined || value === null) return;
  const list: readonly unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  for (const entry of list) {
    if (typeof entry !== 'string') continue;
    for (const part of entry.split(',')) {
      const item = part.trim();
      if (item !== '') yield item;
    }
  }
}

function quote(item: string): string {
  return JSON.stringify(item.length > 40 ? `${item.slice(0, 40)}…` : item);
}
