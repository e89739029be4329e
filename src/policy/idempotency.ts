import { type HeaderRecord, headerValue } from './header-value.js';

/**
 * Methods whose effect is the same whether the request is sent once or several times
 * (RFC 9110 §9.2.2). POST, PATCH and CONNECT are not among them.
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'TRACE',
]);

/**
 * Whether sending the request twice is safe: an idempotent method, or any request that carries a
 * non-empty `Idempotency-Key` header (the server promises to apply it once; a number counts). Method names are
 * compared in upper case (`'get'` counts as GET, as undici and fetch normalise them); the header
 * name in any case.
 *
 * Only idempotent requests are retried after the server may have received them; hedging asks
 * more, see {@link isHedgeSafe}.
 *
 * @example
 * isIdempotent('GET'); // true
 * isIdempotent('POST', { 'Idempotency-Key': 'order-42' }); // true
 * isIdempotent('POST'); // false
 * @see RFC 9110 §9.2.2; IETF draft "The Idempotency-Key HTTP Header Field".
 */
export function isIdempotent(method: string, headers?: HeaderRecord | undefined): boolean {
  if (typeof method === 'string' && IDEMPOTENT_METHODS.has(method.toUpperCase())) return true;
  return hasIdempotencyKey(headers);
}

/**
 * Methods that only read (RFC 9110 §9.2.1): two copies in flight at once change nothing on the server.
 * The only methods prazo hedges without an `Idempotency-Key`.
 */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether two copies of the request may be **in flight at the same time** (a hedge): a safe method
 * (GET, HEAD, OPTIONS), or any request carrying an `Idempotency-Key`. Stricter than
 * {@link isIdempotent}: a PUT or DELETE may be retried after the first copy failed, but two
 * concurrent copies can race each other (and a later write) on the server.
 *
 * @example
 * isHedgeSafe('GET'); // true
 * isHedgeSafe('PUT'); // false
 * isHedgeSafe('PUT', { 'Idempotency-Key': 'order-42' }); // true
 * @see RFC 9110 §9.2.1–9.2.2; Dean & Barroso, "The Tail at Scale".
 */
export function isHedgeSafe(method: string, headers?: HeaderRecord | undefined): boolean {
  if (typeof method === 'string' && SAFE_METHODS.has(method.toUpperCase())) return true;
  return hasIdempotencyKey(headers);
}

/**
 * Whether `headers` carry a usable `Idempotency-Key`: a non-blank string, or a finite number (callers
 * write `{ 'Idempotency-Key': 42 }` and it goes on the wire as `42`), alone or in a list.
 */
export function hasIdempotencyKey(headers: HeaderRecord | null | undefined): boolean {
  const key: unknown = headerValue(headers, 'idempotency-key');
  return Array.isArray(key) ? key.some(isUsableKey) : isUsableKey(key);
}

/**
 * {@link hasIdempotencyKey} for headers as flat pairs (`[name, value, …]`, string values), the form
 * the undici interceptor hands its requests over in.
 */
export function hasIdempotencyKeyInPairs(pairs: readonly string[] | null): boolean {
  if (pairs === null) return false;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i]!;
    if (name.length === 15 && name.toLowerCase() === 'idempotency-key' && isUsableKey(pairs[i + 1]))
      return true;
  }
  return false;
}

function isUsableKey(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  return typeof value === 'number' && Number.isFinite(value);
}
