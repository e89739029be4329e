/**
 * Every failure prazo raises is a {@link PrazoError} with a stable `code`. Match on `code`
 * (or use {@link isPrazoError}) rather than on `instanceof`: two copies of prazo in one process
 * (ESM and CJS, or two versions) produce distinct classes but the same codes.
 */
export type PrazoErrorCode =
  | 'INVALID_OPTION'
  | 'INVALID_INPUT'
  | 'DEADLINE_INSUFFICIENT'
  | 'DEADLINE_EXCEEDED'
  | 'CANCELLED'
  | 'RETRY_BUDGET_EXHAUSTED'
  | 'RETRY_AFTER_EXCEEDS_DEADLINE'
  | 'CONNECT_TIMEOUT'
  | 'READ_TIMEOUT'
  | 'REQUEST_FAILED'
  | 'FOREIGN_ORIGIN'
  | 'ATTEMPT_ABANDONED'
  | 'BODY_DESTROYED'
  | 'RESOLVER_FAILED'
  | 'CONCURRENCY_LIMITED'
  | 'THROTTLED'
  | 'SERVER_OVERLOADED'
  | PrometheusErrorCode;

/** Codes of the {@link PrometheusError} family: what went wrong reading the Prometheus HTTP API. */
export type PrometheusErrorCode =
  | 'PROMETHEUS_UNAVAILABLE'
  | 'PROMETHEUS_HTTP_ERROR'
  | 'PROMETHEUS_QUERY_ERROR'
  | 'PROMETHEUS_BAD_RESPONSE'
  | 'PROMETHEUS_NO_DATA'
  | 'PROMETHEUS_NOT_FINITE'
  | 'PROMETHEUS_WRONG_METRIC_TYPE';

/** Base class of every error prazo throws. */
export class PrazoError extends Error {
  /** Stable machine-readable identifier of the failure. */
  readonly code: PrazoErrorCode;

  constructor(code: PrazoErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  override get name(): string {
    return 'PrazoError';
  }
}

/**
 * An option had a value prazo cannot use. `option` names it (`p99Ms`, `retryBudget.windowMs` …).
 */
export class InvalidOptionError extends PrazoError {
  /** Dotted path of the offending option. */
  readonly option: string;
  /** The value that was rejected. */
  readonly value: unknown;

  constructor(option: string, expected: string, value: unknown) {
    super('INVALID_OPTION', `Expected \`${option}\` to be ${expected}, got ${describe(value)}.`);
    this.option = option;
    this.value = value;
  }
}

/**
 * External input (a histogram file, a CLI argument, an admin command) could not be read.
 * `source` and `line` locate it when known.
 */
export class InvalidInputError extends PrazoError {
  readonly source: string | undefined;
  readonly line: number | undefined;

  constructor(message: string, where: { source?: string; line?: number } = {}) {
    const prefix = where.source
      ? `${where.source}${where.line === undefined ? '' : `:${where.line}`}: `
      : where.line === undefined
        ? ''
        : `line ${where.line}: `;
    super('INVALID_INPUT', prefix + message);
    this.source = where.source;
    this.line = where.line;
  }
}

/** The remaining deadline cannot hold the dependency's p99: the dependency was not called. */
export class DeadlineInsufficientError extends PrazoError {
  readonly remainingMs: number;
  readonly requiredMs: number;
  readonly dependency: string;

  /** `message` replaces the default one, which speaks of a dependency's p99. */
  constructor(dependency: string, remainingMs: number, requiredMs: number, message?: string) {
    super(
      'DEADLINE_INSUFFICIENT',
      message ??
        `Deadline too short for ${dependency}: ${describeTimeLeft(remainingMs)}, its p99 needs ${Math.ceil(requiredMs)} ms.`,
    );
    this.remainingMs = remainingMs;
    this.requiredMs = requiredMs;
    this.dependency = dependency;
  }
}

/** The deadline passed while the work was running. */
export class DeadlineExceededError extends PrazoError {
  constructor(message = 'Deadline exceeded.', options?: { cause?: unknown }) {
    super('DEADLINE_EXCEEDED', message, options);
  }
}

/** The caller aborted (its own signal), as distinct from the deadline running out. */
export class CancelledError extends PrazoError {
  constructor(message = 'Cancelled by the caller.', options?: { cause?: unknown }) {
    super('CANCELLED', message, options);
  }
}

/**
 * The dependency's shared retry budget refused an extra attempt: under widespread failure the
 * client stops amplifying the load and fails fast. `cause` holds the last attempt's failure.
 */
export class RetryBudgetExhaustedError extends PrazoError {
  /** The dependency whose budget is spent, when known. */
  readonly dependency: string | undefined;

  constructor(options: { cause?: unknown; dependency?: string } = {}) {
    super(
      'RETRY_BUDGET_EXHAUSTED',
      `Retry budget exhausted${options.dependency === undefined ? '' : ` for ${options.dependency}`}: not retrying.`,
      'cause' in options ? { cause: options.cause } : undefined,
    );
    this.dependency = options.dependency;
  }
}

/**
 * The server asked (with `Retry-After`) for a wait that, plus the dependency's p99, does not fit
 * the remaining deadline: prazo fails now instead of sleeping the deadline away.
 */
export class RetryAfterExceedsDeadlineError extends PrazoError {
  /** The wait the server asked for, in ms. */
  readonly retryAfterMs: number;
  /** Time that was left before the deadline, in ms. */
  readonly remainingMs: number;

  /**
   * @param options.p99Ms - The dependency's p99, when known: the message then says what the retry
   *   would have needed (the wait plus the p99).
   */
  constructor(options: { retryAfterMs: number; remainingMs: number; p99Ms?: number; cause?: unknown }) {
    const { retryAfterMs, remainingMs, p99Ms } = options;
    const asked =
      p99Ms === undefined
        ? `The server asked to retry after ${retryAfterMs} ms`
        : `The server asked to retry after ${retryAfterMs} ms; with a p99 of ${p99Ms} ms that needs ${retryAfterMs + p99Ms} ms`;
    const left =
      remainingMs >= 1
        ? `only ${Math.floor(remainingMs)} ms are left before the deadline`
        : describeTimeLeft(remainingMs);
    super(
      'RETRY_AFTER_EXCEEDS_DEADLINE',
      `${asked}, but ${left}.`,
      'cause' in options ? { cause: options.cause } : undefined,
    );
    this.retryAfterMs = options.retryAfterMs;
    this.remainingMs = options.remainingMs;
  }
}

/**
 * An attempt could not open a connection within the connect timeout (the instance looks down).
 * `cause` holds undici's error.
 */
export class ConnectTimeoutError extends PrazoError {
  /** The connect timeout in force, in ms. */
  readonly timeoutMs: number | undefined;

  constructor(message = 'Connect timeout.', options: { cause?: unknown; timeoutMs?: number } = {}) {
    super('CONNECT_TIMEOUT', message, 'cause' in options ? { cause: options.cause } : undefined);
    this.timeoutMs = options.timeoutMs;
  }
}

/**
 * An attempt was sent but no answer came within its per-attempt timeout (the server took the work
 * and is slow).
 */
export class ReadTimeoutError extends PrazoError {
  /** The per-attempt timeout that ran out, in ms. */
  readonly timeoutMs: number | undefined;

  constructor(message = 'Read timeout.', options: { cause?: unknown; timeoutMs?: number } = {}) {
    super('READ_TIMEOUT', message, 'cause' in options ? { cause: options.cause } : undefined);
    this.timeoutMs = options.timeoutMs;
  }
}

/**
 * An attempt failed for a reason other than a timeout (connection refused, reset, closed socket…)
 * and was not, or could no longer be, retried. `phase` says whether the request left (`read`) or
 * not (`connect`); `cause` holds the underlying error.
 */
export class RequestFailedError extends PrazoError {
  /** Where the last attempt stopped. */
  readonly phase: 'connect' | 'read';

  constructor(message: string, options: { cause?: unknown; phase: 'connect' | 'read' }) {
    super('REQUEST_FAILED', message, 'cause' in options ? { cause: options.cause } : undefined);
    this.phase = options.phase;
  }
}

/**
 * `dependency.fetch()` was given an absolute URL whose origin is not one of the dependency's
 * `origins`. prazo refuses it rather than send it (and its `Authorization` header) to the
 * dependency; nothing was sent anywhere. Configure `passThroughFetch` to hand such calls, untouched,
 * to another fetch.
 */
export class ForeignOriginError extends PrazoError {
  /** The origin that was refused (`scheme://host:port`; the path and query are not kept). */
  readonly origin: string;
  /** The dependency whose `fetch` refused it. */
  readonly dependency: string;

  constructor(dependency: string, origin: string) {
    super(
      'FOREIGN_ORIGIN',
      `${origin} is not an origin of ${dependency}: refused, not sent (give a path, or a URL on one of its origins; passThroughFetch sends other origins elsewhere).`,
    );
    this.origin = origin;
    this.dependency = dependency;
  }
}

/**
 * One attempt of a call was stopped because its answer is no longer wanted: another copy of the
 * hedged request answered first. It does not reach the caller; the call's history records the
 * attempt as aborted, with this code.
 */
export class AttemptAbandonedError extends PrazoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTEMPT_ABANDONED', message, options);
  }
}

/**
 * A response body was destroyed before its end (by the caller, or cut by prazo at the dump limit):
 * reading it rejects with this error, and its connection is closed.
 */
export class BodyDestroyedError extends PrazoError {
  constructor(message = 'Response body destroyed before its end.', options?: { cause?: unknown }) {
    super('BODY_DESTROYED', message, options);
  }
}

/** Where a failed Prometheus read went: the server and the PromQL, when there was one. */
export interface PrometheusErrorContext {
  /** Base URL of the Prometheus server (`http://host:9090`). */
  url: string;
  /** The PromQL query that failed, when the failure belongs to one. */
  query?: string | undefined;
  cause?: unknown;
}

/**
 * Base class of the errors prazo raises while reading Prometheus (`prazo calibrate --prometheus`, the
 * fleet latency feed, fleet drift). Match on `code`; `url` and `query` say what was asked.
 */
export class PrometheusError extends PrazoError {
  /** Base URL of the Prometheus server. */
  readonly url: string;
  /** The PromQL query, when the failure belongs to one. */
  readonly query: string | undefined;

  constructor(code: PrometheusErrorCode, message: string, context: PrometheusErrorContext) {
    super(code, message, 'cause' in context ? { cause: context.cause } : undefined);
    this.url = context.url;
    this.query = context.query;
  }
}

/** Prometheus could not be reached: connection refused or reset, unknown host, or no answer in time. */
export class PrometheusUnavailableError extends PrometheusError {
  constructor(message: string, context: PrometheusErrorContext) {
    super('PROMETHEUS_UNAVAILABLE', message, context);
  }
}

/** Prometheus answered with an HTTP error status and no API error body. `status` holds it. */
export class PrometheusHttpError extends PrometheusError {
  /** The HTTP status of the answer. */
  readonly status: number;

  constructor(message: string, context: PrometheusErrorContext & { status: number }) {
    super('PROMETHEUS_HTTP_ERROR', message, context);
    this.status = context.status;
  }
}

/** The API answered `status: "error"` (a bad query, a query timeout …). `errorType` is Prometheus' own. */
export class PrometheusQueryError extends PrometheusError {
  /** Prometheus' `errorType` (`bad_data`, `execution`, `timeout`, `canceled`, `internal` …). */
  readonly errorType: string;

  constructor(message: string, context: PrometheusErrorContext & { errorType: string }) {
    super('PROMETHEUS_QUERY_ERROR', message, context);
    this.errorType = context.errorType;
  }
}

/** The answer was not the JSON shape of the Prometheus HTTP API (not JSON, a wrong result type …). */
export class PrometheusBadResponseError extends PrometheusError {
  constructor(message: string, context: PrometheusErrorContext) {
    super('PROMETHEUS_BAD_RESPONSE', message, context);
  }
}

/** The query ran but returned no series or no samples in the range: nothing to calibrate on. */
export class PrometheusNoDataError extends PrometheusError {
  constructor(message: string, context: PrometheusErrorContext) {
    super('PROMETHEUS_NO_DATA', message, context);
  }
}

/** A value that must be a finite number (a quantile, a bucket count) was NaN or ±Inf. */
export class PrometheusNotFiniteError extends PrometheusError {
  /** The value as Prometheus sent it (`NaN`, `+Inf` …). */
  readonly value: string;

  constructor(message: string, context: PrometheusErrorContext & { value: string }) {
    super('PROMETHEUS_NOT_FINITE', message, context);
    this.value = context.value;
  }
}

/** The metric exists but is not a histogram (a counter, a gauge, a summary). */
export class PrometheusWrongMetricTypeError extends PrometheusError {
  /** The metric asked for. */
  readonly metric: string;
  /** What it is instead: `float` (a counter or gauge) or `summary`. */
  readonly found: 'float' | 'summary';

  constructor(
    message: string,
    context: PrometheusErrorContext & { metric: string; found: 'float' | 'summary' },
  ) {
    super('PROMETHEUS_WRONG_METRIC_TYPE', message, context);
    this.metric = context.metric;
    this.found = context.found;
  }
}

/** Returns true when `error` is a prazo error, optionally with the given `code`. */
export function isPrazoError(error: unknown, code?: PrazoErrorCode): error is PrazoError {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { code?: unknown; name?: unknown };
  if (candidate.name !== 'PrazoError' && !(error instanceof PrazoError)) return false;
  return code === undefined || candidate.code === code;
}

/**
 * The time left before a deadline, in words that never contradict the number: `"599 ms left"`,
 * `"no time left"`, or `"the deadline passed 1000 ms ago"` for a negative `remainingMs`.
 * @internal Shared by the error messages.
 */
export function describeTimeLeft(remainingMs: number): string {
  if (!Number.isFinite(remainingMs)) return remainingMs > 0 ? 'unbounded time left' : 'no time left';
  if (remainingMs >= 1) return `${Math.floor(remainingMs)} ms left`;
  if (remainingMs > -1) return 'no time left';
  return `the deadline passed ${Math.floor(-remainingMs)} ms ago`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  return typeof value;
}

/**
 * A resolver of a dependency's origins (a function given as `origins`, or `dnsOrigins()`) threw,
 * rejected, did not answer in time, or answered nothing usable. The dependency keeps its last good
 * set of instances; `cause` holds what the resolver did.
 */
export class ResolverError extends PrazoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RESOLVER_FAILED', message, options);
  }
}

/**
 * The dependency's adaptive concurrency limit was reached and the call could not start in time: the
 * wait queue was full, or the wait it faced (or had already spent) left less than the dependency's
 * p99 before the deadline. The dependency was not called; the retry budget counts the call as
 * refused, not as an original. See docs/overload.md.
 */
export class ConcurrencyLimitedError extends PrazoError {
  readonly dependency: string;
  /** The concurrency limit in force when the call was refused. */
  readonly limit: number;
  /** Calls that were waiting for a slot, this one excluded. */
  readonly queued: number;
  /** Time that was left before the deadline, in ms. */
  readonly remainingMs: number;

  constructor(
    dependency: string,
    why: string,
    state: { limit: number; queued: number; remainingMs: number },
  ) {
    super(
      'CONCURRENCY_LIMITED',
      `${dependency}: ${state.limit} calls in flight (its adaptive limit) and ${state.queued} waiting; ${why}`,
    );
    this.dependency = dependency;
    this.limit = state.limit;
    this.queued = state.queued;
    this.remainingMs = state.remainingMs;
  }
}

/**
 * Adaptive throttling rejected the call locally: over the throttle's window the dependency accepted
 * too few of the calls sent to it (requests > K × accepts), so this one was dropped with probability
 * `probability` without being sent. The retry budget counts it as refused. See docs/overload.md.
 */
export class ThrottledError extends PrazoError {
  readonly dependency: string;
  /** The local rejection probability in force, 0 … 1. */
  readonly probability: number;

  constructor(dependency: string, probability: number) {
    super(
      'THROTTLED',
      `${dependency} accepts too few calls: rejected locally (rejection probability ${probability.toFixed(2)}), not sent.`,
    );
    this.dependency = dependency;
    this.probability = probability;
  }
}

/**
 * A server adapter's admission refused a request because the service is overloaded: its queue was
 * full, the request was shed for its low criticality, or it waited in the queue longer than the
 * CoDel target under sustained delay. Answered as 503 with `Retry-After` (see docs/overload.md).
 */
export class ServerOverloadedError extends PrazoError {
  /** Why: `queue-full`, `shed` or `queue-delay`. */
  readonly reason: 'queue-full' | 'shed' | 'queue-delay';
  /** The wait the server asks for before a new attempt, in ms (sent as `Retry-After` in seconds). */
  readonly retryAfterMs: number;

  constructor(reason: 'queue-full' | 'shed' | 'queue-delay', retryAfterMs: number, message: string) {
    super('SERVER_OVERLOADED', message);
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}
