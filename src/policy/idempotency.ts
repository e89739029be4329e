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
 * non-empty `Idempotency-Key` header (the server promises to apply it once). Method names are
 * compared in upper case (`'get'` counts as GET, as undici and fetch normalise them); the header
 * name in any case.
 *
 * Only idempotent requests are retried after the server may have received them, and only they
 * are hedged.
 *
 * @example
 * isIdempotent('GET'); // true
 * isIdempotent('POST', { 'Idempotency-Key': 'order-42' }); // true
 * isIdempotent('POST'); // false
 * @see RFC 9110 §9.2.2; IETF draft "The Idempotency-Key HTTP Header Field".
 */
export function isIdempotent(method: string, headers?: HeaderRecord | undefined): boolean {
  if (typeof method === 'string' && IDEMPOTENT_METHODS.has(method.toUpperCase())) return true;
  const key = headerValue(headers, 'idempotency-key');
  if (typeof key === 'string') return key.trim() !== '';
  return Array.isArray(key) && key.some((k) => typeof k === 'string' && k.trim() !== '');
}
