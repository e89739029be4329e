/**
 * The error code of a failed answer's JSON body — `{"error": "READ_TIMEOUT"}` (the drill's hops) or
 * prazo's `{"error": {"code": …}}` — else `'error'`.
 */
export function errorCodeOf(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: unknown } | null)?.error;
    if (typeof error === 'string') return error;
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : 'error';
  } catch {
    return 'error';
  }
}
