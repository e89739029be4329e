/**
 * Longest `Retry-After` prazo accepts, in ms (one day). A server asking for more is either broken or
 * saying "not today"; either way no request deadline can hold it.
 */
export const RETRY_AFTER_MAX_MS = 86_400_000;

/** What a `Retry-After` header says, before the policy decides anything. */
export type RetryAfterReading =
  | { kind: 'absent' }
  | { kind: 'invalid' }
  | { kind: 'too-long' }
  | { kind: 'wait'; ms: number };

/**
 * Parses a `Retry-After` header into the wait it asks for, in ms from `nowMs`.
 *
 * - delta-seconds (`"120"`) → `120_000`. Only ASCII digits are accepted (RFC 9110 §10.2.3):
 *   `"-5"`, `"1.5"`, `"+3"` are invalid.
 * - HTTP-date in the preferred IMF-fixdate form (`"Sun, 06 Nov 1994 08:49:37 GMT"`) and the two
 *   obsolete forms a recipient must accept (RFC 850 `"Sunday, 06-Nov-94 08:49:37 GMT"`, asctime
 *   `"Sun Nov  6 08:49:37 1994"`) → the ms between `nowMs` and that instant, rounded up; a date in
 *   the past → `0`.
 * - A list (array, or the comma-joined deltas a proxy may produce) is accepted only when every
 *   value gives the same wait.
 *
 * Returns `undefined` for a missing, empty, negative, malformed or ambiguous (differing values)
 * header, and for a wait above {@link RETRY_AFTER_MAX_MS}. Never throws.
 *
 * @param value the header value(s) as Node or undici hand them over.
 * @param nowMs current epoch ms, to turn a date into a wait.
 * @returns the wait in ms, or `undefined`.
 * @example
 * parseRetryAfter('3', Date.now()); // 3000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('2015-10-21T07:27:58Z')); // 2000
 * @see RFC 9110 §10.2.3 (Retry-After) and §5.6.7 (HTTP-date).
 */
export function parseRetryAfter(
  value: string | string[] | undefined | null,
  nowMs: number,
): number | undefined {
  const reading = readRetryAfter(value, nowMs);
  return reading.kind === 'wait' ? reading.ms : undefined;
}

/**
 * Like {@link parseRetryAfter} but tells apart a missing header, a malformed one and one asking
 * for more than {@link RETRY_AFTER_MAX_MS} (the retry policy treats the last as "do not retry").
 */
export function readRetryAfter(value: unknown, nowMs: number): RetryAfterReading {
  if (value === undefined || value === null) return ABSENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return ABSENT;
    let agreed: RetryAfterReading | undefined;
    for (const item of value as unknown[]) {
      const one = readOne(item, nowMs);
      if (one.kind === 'absent' || one.kind === 'invalid') return INVALID;
      if (agreed === undefined) agreed = one;
      else if (!same(agreed, one)) return INVALID;
    }
    return agreed ?? ABSENT;
  }
  return readOne(value, nowMs);
}

const ABSENT: RetryAfterReading = Object.freeze({ kind: 'absent' });
const INVALID: RetryAfterReading = Object.freeze({ kind: 'invalid' });
const TOO_LONG: RetryAfterReading = Object.freeze({ kind: 'too-long' });

const same = (a: RetryAfterReading, b: RetryAfterReading): boolean =>
  a.kind === b.kind && (a.kind !== 'wait' || a.ms === (b as { ms: number }).ms);

const DELTA = /^[0-9]+$/;
const DELTA_LIST = /^[0-9]+(?:[ \t]*,[ \t]*[0-9]+)+$/;
// IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ([A-Z][a-z]{2}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
// RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
const RFC_850 =
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-([A-Z][a-z]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
// asctime: Sun Nov  6 08:49:37 1994
const ASCTIME =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([0-9 ][0-9]) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function readOne(value: unknown, nowMs: number): RetryAfterReading {
  if (typeof value !== 'string') return INVALID;
  // Optional whitespace around a field value is not part of it (RFC 9110 §5.5).
  const text = value.trim();
  if (text === '') return ABSENT;
  if (DELTA.test(text)) return fromDelta(text);
  if (DELTA_LIST.test(text)) {
    const parts = text.split(',');
    const first = parts[0]!.trim();
    for (const part of parts) if (Number(part.trim()) !== Number(first)) return INVALID;
    return fromDelta(first);
  }
  const dateMs = parseHttpDate(text, nowMs);
  if (dateMs === undefined || !Number.isFinite(nowMs)) return INVALID;
  const waitMs = Math.max(0, Math.ceil(dateMs - nowMs));
  return waitMs > RETRY_AFTER_MAX_MS ? TOO_LONG : { kind: 'wait', ms: waitMs };
}

function fromDelta(digits: string): RetryAfterReading {
  // Number() of a long digit string is finite up to ~309 digits and Infinity beyond; both are caught.
  const ms = Number(digits) * 1000;
  return ms > RETRY_AFTER_MAX_MS ? TOO_LONG : { kind: 'wait', ms };
}

/** Epoch ms of an HTTP-date in any of its three forms, or undefined. */
function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[4]), m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  m = RFC_850.exec(text);
  if (m) {
    // A two-digit year: the latest instant with those last two digits that is not more than 50
    // years in the future (RFC 9110 §5.6.7) — compared as instants, not as years, so 31 Dec of the
    // year now + 50 is already "more than 50 years" ahead on 3 Dec.
    const now = Number.isFinite(nowMs) ? nowMs : Date.UTC(2000, 0, 1);
    const nowYear = new Date(now).getUTCFullYear();
    const limitMs = new Date(now).setUTCFullYear(nowYear + 50);
    const century = Math.floor((nowYear - 50) / 100) * 100;
    const [, , day, month, yy, hour, minute, second] = m;
    for (let year = century + 100 + Number(yy); year >= century - 100; year -= 100) {
      const candidate = utc(year, month!, Number(day), Number(hour), Number(minute), Number(second));
      if (candidate === undefined || candidate <= limitMs) return candidate;
    }
    return undefined;
  }
  m = ASCTIME.exec(text);
  if (m) return utc(Number(m[7]), m[2]!, Number(m[3]!.trim()), Number(m[4]), Number(m[5]), Number(m[6]));
  return undefined;
}

function utc(year: number, monthName: string, day: number, hour: number, minute: number, second: number) {
  const month = MONTHS.indexOf(monthName);
  if (month < 0 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  const base = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // Reject 31 Feb and friends instead of letting Date.UTC roll them into March.
  if (new Date(base).getUTCDate() !== day) return undefined;
  // A leap second (:60) is the instant right after :59.
  return second === 60 ? base + 1000 : base;
}
