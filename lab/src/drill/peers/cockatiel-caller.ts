import {
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleAll,
  retry,
  TimeoutStrategy,
  timeout,
  wrap,
} from 'cockatiel';
import { ATTEMPT_HEADER, type AttemptKind, attemptHeaderValue } from 'prazo/wire';
import { undici } from '../../undici.js';
import type { CallResult, NaiveCaller } from './naive-caller.js';
import { type PeerCallerOptions, UpstreamStatusError } from './settings.js';

/** What the drill can read of a cockatiel client: whether its breaker is open right now. */
export interface CockatielCaller extends NaiveCaller {
  /** `true` while the circuit breaker is open (calls fail at once without reaching the dependency). */
  breakerOpen(): boolean;
}

/** The breaker opens after this many failures in a row (cockatiel's README). */
export const COCKATIEL_CONSECUTIVE_FAILURES = 5;
/** The open breaker lets a trial call through after this long, in ms (cockatiel's README). */
export const COCKATIEL_HALF_OPEN_AFTER_MS = 10_000;

/**
 * The cockatiel configuration of the drill: cockatiel's recommended policy (3.x; see docs/drill.md for why not 4.x) around undici, as its
 * README composes it — `retry(handleAll, { maxAttempts, backoff: new ExponentialBackoff() })` wrapped
 * around `circuitBreaker(handleAll, { halfOpenAfter: 10 s, breaker: new ConsecutiveBreaker(5) })` —
 * with a cooperative per-attempt `timeout` inside (the README's "Timeout" section: the signal reaches
 * undici) and an outer `timeout` at the gateway's deadline, cockatiel's knob for bounding the whole call.
 * A 5xx answer is thrown so that every policy counts it as a failure.
 *
 * @see https://github.com/connor4312/cockatiel#readme (sections "Retry", "Circuit Breaker", "Timeout")
 */
export function createCockatielCaller(options: PeerCallerOptions): CockatielCaller {
  const pools = options.origins.map(
    (origin) =>
      new undici.Pool(origin, { connections: options.connections ?? 256, connectTimeout: options.connectMs }),
  );
  let next = 0;
  const breaker = circuitBreaker(handleAll, {
    halfOpenAfter: COCKATIEL_HALF_OPEN_AFTER_MS,
    breaker: new ConsecutiveBreaker(COCKATIEL_CONSECUTIVE_FAILURES),
  });
  const policy = wrap(
    timeout(options.deadlineMs, TimeoutStrategy.Cooperative),
    retry(handleAll, { maxAttempts: options.attempts - 1, backoff: new ExponentialBackoff() }),
    breaker,
    timeout(options.readMs, TimeoutStrategy.Cooperative),
  );

  return {
    async call(path, headers, tag = '', trace) {
      let number = 0;
      return policy.execute(async ({ signal }): Promise<CallResult> => {
        number++;
        const kind: AttemptKind = number === 1 ? 'original' : 'retry';
        const pool = pools[next++ % pools.length]!;
        const startedAt = performance.now();
        try {
          const response = await pool.request({
            path,
            method: 'GET',
            headers: { ...headers, [ATTEMPT_HEADER]: attemptHeaderValue(number, kind) },
            signal,
          });
          const body = await response.body.text();
          const ok = response.statusCode < 500;
          options.onAttempt?.(kind, performance.now() - startedAt, ok, tag, trace);
          if (!ok) throw new UpstreamStatusError(response.statusCode, body);
          return { status: response.statusCode, body };
        } catch (error) {
          if (!(error instanceof UpstreamStatusError))
            options.onAttempt?.(kind, performance.now() - startedAt, false, tag, trace);
          throw error;
        }
      });
    },
    breakerOpen: () => breaker.state === CircuitState.Open,
    async close(graceful = false) {
      await Promise.all(pools.map((pool) => (graceful ? pool.close() : pool.destroy())));
    },
  };
}
