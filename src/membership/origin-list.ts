import { InvalidInputError } from '../errors.js';

/**
 * Validates what a resolver answered and normalises it: a non-empty array of `http(s)://host:port`
 * origins without path, query or fragment, each as `URL.origin` gives it, duplicates dropped (first
 * kept).
 *
 * @throws {InvalidInputError} naming the first unusable entry, or saying the list is empty: a
 * resolver that answers nothing is a failure, never "no instances".
 */
export function parseOriginList(value: unknown): string[] {
  if (!Array.isArray(value))
    throw new InvalidInputError(`Expected an array of origins, got ${typeof value}.`);
  if (value.length === 0) throw new InvalidInputError('The resolver returned no origins.');
  const seen = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const origin = originOf(value[i]);
    if (origin === undefined)
      throw new InvalidInputError(
        `Entry ${i} (${JSON.stringify(value[i]) ?? String(value[i])}) is not an http(s) origin (scheme://host:port).`,
      );
    seen.add(origin);
  }
  return [...seen];
}

function originOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return url.origin;
}
