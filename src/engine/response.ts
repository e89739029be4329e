import type { AttemptPhase } from '../policy/classify.js';
import type { ResponseBody, ResponseHeaders } from '../transport/response-body.js';
import type { AttemptKind } from '../wire/attempt-header.js';
import type { DeadlineLedger } from './ledger.js';

export type { ResponseBody, ResponseHeaders } from '../transport/response-body.js';

/** What happened to one attempt, in the history carried by responses and errors. */
export interface AttemptRecord {
  /** 1-based attempt number within the call. */
  attempt: number;
  /** The instance's origin. */
  instance: string;
  kind: AttemptKind;
  /** Where the attempt stopped (`response` when the server answered). */
  phase: AttemptPhase;
  /** From send to response headers or failure, in ms. */
  durationMs: number;
  outcome: 'success' | 'failure' | 'aborted';
  status?: number;
  /** `code` of the attempt's error. */
  errorCode?: string;
}

/**
 * The answer to a call: the status and headers, the body still to be read (read it or `dump()` it:
 * the connection returns to the pool only then), and every attempt made.
 *
 * A final retryable status (a 503 with no retry left) is returned, not thrown; so are deterministic
 * statuses (400, 404, 422 …), after one attempt.
 */
export interface DependencyResponse {
  status: number;
  headers: ResponseHeaders;
  body: ResponseBody;
  attempts: readonly AttemptRecord[];
  /**
   * Where the call's time went: queue, attempts (connect, first byte, body), waits between them,
   * and — when the dependency is a prazo server — its own share, down its chain (`Server-Timing`).
   * See docs/deadlines.md, "The deadline ledger".
   */
  ledger: DeadlineLedger;
}

/** Reads and drops a response nobody will use, so its connection returns to the pool. */
export function discard(response: DependencyResponse): void {
  response.body.dump().catch(noop);
}

function noop(): void {}
