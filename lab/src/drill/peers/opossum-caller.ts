import CircuitBreaker from 'opossum';
import { ATTEMPT_HEADER, attemptHeaderValue } from 'prazo/wire';
import { undici } from '../../undici.js';
import type { AttemptTrace } from '../waterfall/trail.js';
import type { CockatielCaller } from './cockatiel-caller.js';
import type { CallResult } from './naive-caller.js';
import { type PeerCallerOptions, UpstreamStatusError } from './settings.js';

/** opossum's recommended thresholds (its README's first example). */
export const OPOSSUM_OPTIONS = Object.freeze({
  /** Open when half of the calls in the rolling window fail. */
  errorThresholdPercentage: 50,
  /** Let a trial call through after 30 s. */
  resetTimeout: 30_000,
});

/** The answer of opossum's fallback: what the tier returns while the breaker refuses calls. */
const FALLBACK: CallResult = Object.freeze({
  status: 503,
  body: JSON.stringify({ error: 'circuit-open-fallback' }),
});

/**
 * The opossum configuration of the drill: one circuit breaker per dependency around undici, as
 * opossum's README sets it up — `timeout` (here the calibrated per-attempt read timeout instead of the
 * example's 3 s), `errorThresholdPercentage: 50`, `resetTimeout: 30 s` — with a fallback, and each
 * call's own AbortSignal aborted at that timeout (the README's "AbortController support", per call so
 * that one timeout cannot abort the other calls in flight). opossum does not retry: one attempt.
 *
 * @see https://nodeshift.dev/opossum/ (Usage, "AbortController support", "Fallback")
 */
export function createOpossumCaller(options: PeerCallerOptions): CockatielCaller {
  const pools = options.origins.map(
    (origin) =>
      new undici.Pool(origin, { connections: options.connections ?? 256, connectTimeout: options.connectMs }),
  );
  let next = 0;
  const action = async (
    path: string,
    headers: Record<string, string>,
    tag: string,
    trace?: AttemptTrace,
  ): Promise<CallResult> => {
    const pool = pools[next++ % pools.length]!;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.readMs);
    const startedAt = performance.now();
    try {
      const response = await pool.request({
        path,
        method: 'GET',
        headers: { ...headers, [ATTEMPT_HEADER]: attemptHeaderValue(1, 'original') },
        signal: controller.signal,
      });
      const body = await response.body.text();
      const ok = response.statusCode < 500;
      options.onAttempt?.('original', performance.now() - startedAt, ok, tag, trace);
      if (!ok) throw new UpstreamStatusError(response.statusCode, body);
      return { status: response.statusCode, body };
    } catch (error) {
      if (!(error instanceof UpstreamStatusError))
        options.onAttempt?.('original', performance.now() - startedAt, false, tag, trace);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
  const breaker = new CircuitBreaker(action, { ...OPOSSUM_OPTIONS, timeout: options.readMs });
  breaker.fallback(() => FALLBACK);
  // Failures are answered by the fallback; without a listener opossum would also log them.
  breaker.on('failure', () => {});

  return {
    call: (path, headers, tag = '', trace) => breaker.fire(path, headers, tag, trace) as Promise<CallResult>,
    breakerOpen: () => breaker.opened,
    async close(graceful = false) {
      breaker.shutdown();
      await Promise.all(pools.map((pool) => (graceful ? pool.close() : pool.destroy())));
    },
  };
}
