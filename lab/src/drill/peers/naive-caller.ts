import { ATTEMPT_HEADER, type AttemptKind, attemptHeaderValue } from 'prazo/wire';
import type { Pool } from 'undici';
import { undici } from '../../undici.js';
import { type AttemptTrace, TRAIL_HEADER } from '../waterfall/trail.js';

/** Options of {@link createNaiveCaller}: the settings a service gets when nobody calibrated them. */
export interface NaiveCallerOptions {
  /** Dependency name (for messages). */
  name: string;
  /** Base URLs of the dependency's instances, used in turn. */
  origins: readonly string[];
  /** Timeout of each attempt, in ms (the library default everybody keeps: 30 s). */
  timeoutMs: number;
  /** Attempts per call, retried at once on a 5xx or a network error, with no budget. */
  attempts: number;
  /** Connections per instance. @default 256 */
  connections?: number;
  /**
   * Called after each attempt with its kind, duration in ms and whether it answered below 500, and
   * the call's trace when the call was given one.
   */
  onAttempt?: (kind: AttemptKind, durationMs: number, ok: boolean, tag: string, trace?: AttemptTrace) => void;
}

/** What a call returned to the service that made it. */
export interface CallResult {
  status: number;
  body: string;
  /** The drill's trail the answer carried (`x-drill-trail`), when it carried one. */
  trail?: unknown;
}

/** A plain undici client with fixed timeout and blind retries: the "naive" configuration of the drill. */
export interface NaiveCaller {
  /**
   * GETs `path` (POSTs `body` when one is given), passing `headers` along; resolves with the last
   * attempt's answer, or rejects. `tag` and `trace` are handed back to `onAttempt`.
   */
  call(
    path: string,
    headers: Record<string, string>,
    tag?: string,
    trace?: AttemptTrace,
    body?: string,
  ): Promise<CallResult>;
  /** Closes the connections: at once, or once the requests in flight have finished (`graceful`). */
  close(graceful?: boolean): Promise<void>;
}

/**
 * Creates the naive client: what a service looks like with a 30 s timeout, 3 attempts, no budget,
 * no deadline and no hedging. A write (a call with a body) is retried the same way: blindly, with
 * no idempotency key. The attempt header is sent so the double can tell retries apart; it
 * changes nothing in the call.
 */
export function createNaiveCaller(options: NaiveCallerOptions): NaiveCaller {
  const pools = options.origins.map(
    (origin) => new undici.Pool(origin, { connections: options.connections ?? 256, pipelining: 1 }),
  );
  let next = 0;

  async function attempt(
    pool: Pool,
    path: string,
    headers: Record<string, string>,
    number: number,
    tag: string,
    trace: AttemptTrace | undefined,
    body: string | undefined,
  ): Promise<CallResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    const kind: AttemptKind = number === 1 ? 'original' : 'retry';
    const startedAt = performance.now();
    try {
      const response = await pool.request({
        path,
        method: body === undefined ? 'GET' : 'POST',
        headers: { ...headers, [ATTEMPT_HEADER]: attemptHeaderValue(number, kind) },
        ...(body === undefined ? {} : { body }),
        signal: controller.signal,
      });
      const text = await response.body.text();
      options.onAttempt?.(kind, performance.now() - startedAt, response.statusCode < 500, tag, trace);
      return { status: response.statusCode, body: text, trail: response.headers[TRAIL_HEADER] };
    } catch (error) {
      options.onAttempt?.(kind, performance.now() - startedAt, false, tag, trace);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async call(path, headers, tag = '', trace, body) {
      let last: unknown;
      for (let number = 1; number <= options.attempts; number++) {
        const pool = pools[next++ % pools.length]!;
        try {
          const result = await attempt(pool, path, headers, number, tag, trace, body);
          if (result.status < 500 || number === options.attempts) return result;
          last = result;
        } catch (error) {
          last = error;
          if (number === options.attempts) throw error;
        }
      }
      throw last;
    },
    async close(graceful = false) {
      await Promise.all(pools.map((pool) => (graceful ? pool.close() : pool.destroy())));
    },
  };
}
