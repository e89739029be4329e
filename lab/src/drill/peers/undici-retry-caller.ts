import { ATTEMPT_HEADER, type AttemptKind, attemptHeaderValue } from 'prazo/wire';
import type { Dispatcher } from 'undici';
import { undici } from '../../undici.js';
import type { AttemptTrace } from '../waterfall/trail.js';
import type { CallResult, NaiveCaller } from './naive-caller.js';
import type { PeerCallerOptions } from './settings.js';

/** The waits of undici's retry interceptor between attempts, sized to fit the gateway's deadline. */
export const UNDICI_RETRY_WAITS = Object.freeze({ minTimeout: 50, maxTimeout: 400, timeoutFactor: 2 });

/**
 * The undici configuration of the drill: an `Agent` with its own timeouts (`connectTimeout`,
 * `headersTimeout` and `bodyTimeout` at the calibrated per-attempt values) composed with undici's
 * `interceptors.retry` — exponential waits (`minTimeout`, `maxTimeout`, `timeoutFactor`), the default
 * retryable statuses (500, 502, 503, 504, 429, honouring `Retry-After`) and error codes, plus undici's
 * own timeout codes so that a timed-out attempt is retried like at the other peers — and a per-call
 * `signal` that ends the whole call at the gateway's deadline. undici retries on the same origin; the
 * calls themselves alternate between the instances.
 *
 * The attempt header is set by a second interceptor inside the retry one, which sees every attempt:
 * that is how the supplier double tells undici's retries from originals.
 *
 * @see https://undici.nodejs.org/#/docs/api/RetryHandler (retry options) and
 *   https://undici.nodejs.org/#/docs/api/Dispatcher?id=dispatchercomposeinterceptors-interceptor
 */
export function createUndiciRetryCaller(options: PeerCallerOptions): NaiveCaller {
  // One record per call, keyed by the call's own headers object: the retry handler dispatches every
  // attempt with the same options, so the interceptor inside it finds the call again.
  const calls = new WeakMap<object, CallRecord>();
  const label: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const record = opts.headers ? calls.get(opts.headers) : undefined;
    if (!record) return dispatch(opts, handler);
    const now = performance.now();
    // The retry handler dispatches again only after the previous attempt failed.
    if (record.number > 0)
      options.onAttempt?.(kindOf(record.number), now - record.startedAt, false, record.tag, record.trace);
    record.number++;
    record.startedAt = now;
    const headers = {
      ...(opts.headers as Record<string, string>),
      [ATTEMPT_HEADER]: attemptHeaderValue(record.number, kindOf(record.number)),
    };
    return dispatch({ ...opts, headers }, handler);
  };
  const agent = new undici.Agent({
    connections: options.connections ?? 256,
    connectTimeout: options.connectMs,
    headersTimeout: options.readMs,
    bodyTimeout: options.readMs,
  });
  const client = agent.compose(
    label,
    undici.interceptors.retry({
      maxRetries: options.attempts - 1,
      ...UNDICI_RETRY_WAITS,
      methods: ['GET'],
      errorCodes: [...UNDICI_DEFAULT_RETRY_CODES, ...UNDICI_TIMEOUT_CODES],
    }),
  );
  let next = 0;

  return {
    async call(path, headers, tag = '', trace): Promise<CallResult> {
      const origin = options.origins[next++ % options.origins.length]!;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), options.deadlineMs);
      const own = { ...headers };
      const record: CallRecord = { number: 0, startedAt: performance.now(), tag, trace };
      calls.set(own, record);
      try {
        const response = await client.request({
          origin,
          path,
          method: 'GET',
          headers: own,
          signal: controller.signal,
        });
        const body = await response.body.text();
        options.onAttempt?.(
          kindOf(Math.max(1, record.number)),
          performance.now() - record.startedAt,
          response.statusCode < 500,
          tag,
          trace,
        );
        return { status: response.statusCode, body };
      } catch (error) {
        options.onAttempt?.(
          kindOf(Math.max(1, record.number)),
          performance.now() - record.startedAt,
          false,
          tag,
          trace,
        );
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    async close(graceful = false) {
      await (graceful ? agent.close() : agent.destroy());
    },
  };
}

interface CallRecord {
  number: number;
  startedAt: number;
  tag: string;
  /** The drill's trace of the call, when it was given one. */
  trace: AttemptTrace | undefined;
}

const kindOf = (number: number): AttemptKind => (number === 1 ? 'original' : 'retry');

/** The error codes undici's retry interceptor retries by default (undici 7). */
const UNDICI_DEFAULT_RETRY_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
];
/** undici's own timeouts: a timed-out attempt is retried, as at the other peers. */
const UNDICI_TIMEOUT_CODES = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
