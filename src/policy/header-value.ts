/** Headers as Node's `http` and undici hand them over: a plain record, names in any case. */
export type HeaderRecord = Record<string, string | string[] | undefined>;

/**
 * The value of header `lowerCaseName` in `headers`, whatever the case of the key (undici and Node
 * lower-case names, a caller's literal may not). Returns `undefined` when absent. Never throws:
 * a record with a throwing getter counts as not carrying the header.
 */
export function headerValue(
  headers: HeaderRecord | null | undefined,
  lowerCaseName: string,
): string | string[] | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  try {
    const direct = headers[lowerCaseName];
    if (direct !== undefined) return direct;
    for (const key of Object.keys(headers)) {
      if (key.length === lowerCaseName.length && key.toLowerCase() === lowerCaseName) return headers[key];
    }
  } catch {
    // A hostile or broken record (a Proxy, a throwing getter): treat the header as absent.
  }
  return undefined;
}
