/**
 * `prazo/http`: deadlines for plain `node:http` servers.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admission } from '../admission/admission.js';
import { withDeadline } from '../deadline/context.js';
import { withRequestCriticality } from '../deadline/criticality-context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError } from '../errors.js';
import type { Criticality } from '../wire/criticality-header.js';
import { ANY_ROUTE, checkAdmission, checkRouteKey, offerRequest, sendRefusal } from './admission-response.js';
import {
  countLateWrites,
  findDeadlineError,
  hopTallyOf,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  runInScope,
  type ServerDeadlineOptions,
  sendDeadlineResponse,
} from './deadline-scope.js';
import { checkIdempotency } from './idempotency/check-idempotency.js';
import type { Idempotency } from './idempotency/idempotency.js';
import { createRequestTrust } from './trust.js';

export * from './admission-exports.js';
export type { ServerDeadlineOptions, ServerTimingPolicy } from './deadline-scope.js';
export { deadlineErrorBody, findDeadlineError, isDeadlineError } from './deadline-scope.js';
export * from './idempotency/idempotency-exports.js';
export type { ServerTrust, TrustByHeader, TrustPolicy } from './trust.js';

/** An incoming request once {@link withDeadlineHandler} has read its deadline. */
export type DeadlineIncomingMessage = IncomingMessage & {
  /** The request's deadline (capped at `maxMs`); its `signal` aborts at the limit or on disconnect. */
  deadline: Deadline;
};

/** A `node:http` request handler that receives the request's deadline. */
export type DeadlineRequestHandler = (
  req: DeadlineIncomingMessage,
  res: ServerResponse,
) => void | Promise<void>;

/** Options of {@link withDeadlineHandler}. */
export interface DeadlineHandlerOptions extends ServerDeadlineOptions<IncomingMessage> {
  /**
   * Called with an error the handler threw or rejected with (after prazo answered 504 or 500 when
   * nothing was sent yet). Use it to log.
   * @default ignore
   */
  onError?: (error: unknown, req: IncomingMessage) => void;
  /**
   * Deadline-aware admission (`createAdmission()`): refuses a request whose deadline is shorter than
   * the route's expected service time (504) and, with `maxInFlight`, queues or sheds beyond the limit
   * (503 + `Retry-After`). See docs/overload.md.
   * @default undefined (every request with time left runs)
   */
  admission?: Admission;
  /**
   * The route a request counts under for the admission's per-route service times. Return a route
   * pattern (`'GET /orders/:id'`), never a raw URL: only `admission.maxRoutes` keys are tracked.
   * @default every request under one route, `'*'`
   */
  routeKey?: (req: IncomingMessage) => string;
  /**
   * Deduplication of requests by `Idempotency-Key` (`createIdempotency()`): the first request with a
   * key runs, a repeat gets its stored response. Applied before admission. See docs/idempotency.md.
   * @default undefined (no deduplication)
   */
  idempotency?: Idempotency;
}

/**
 * Wraps a `node:http` handler so that every request runs under its deadline.
 *
 * - The deadline comes from `x-deadline-epoch-ms` (or `grpc-timeout`) of a caller the `trust`
 *   option accepts, capped at now + `maxMs`; without a usable (or trusted) header it is now +
 *   `defaultMs`.
 * - A request that arrives already expired gets **504 at once**; the handler does not run.
 * - The handler runs inside {@link withDeadline} (so `currentDeadline()` works) with `req.deadline`.
 * - At the limit `req.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 *   If the client disconnects first the signal aborts with `CANCELLED`.
 * - A handler that throws: 504 for `DEADLINE_EXCEEDED` / `DEADLINE_INSUFFICIENT`, also when it comes
 *   wrapped in another error's `cause` (fetch's `TypeError`, an SDK's error: see
 *   {@link findDeadlineError}); a plain-text 500 otherwise (when nothing was sent), never a stack
 *   trace; then `onError`. The returned listener never rejects.
 * - A handler that writes after prazo's 504 has its late writes dropped quietly (no
 *   `ERR_HTTP_HEADERS_SENT`), counted in `lateWrites` on the returned listener and reported to
 *   `onLateWrite`.
 * - The timer and listeners are released when the response finishes or the connection closes.
 * - `x-criticality` (`critical`, `default`, `sheddable`) of a trusted caller becomes the ambient
 *   criticality that prazo's client forwards on the handler's calls.
 * - With `admission`, a request may be refused before the handler runs: 504 when its deadline is
 *   shorter than the route's expected service time, 503 + `Retry-After` when the server sheds load
 *   (see docs/overload.md).
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * http.createServer(withDeadlineHandler(async (req, res) => {
 *   const stock = await callWithDeadline(req.deadline, { name: 'supplier', p99Ms: 250, run });
 *   res.end(JSON.stringify(stock));
 * }, { defaultMs: 1000, maxMs: 5000, trust: 'all' })); // behind an edge that strips x-criticality / x-deadline-epoch-ms
 */
export function withDeadlineHandler(
  handler: DeadlineRequestHandler,
  options: DeadlineHandlerOptions,
): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & { readonly lateWrites: number } {
  const normalized = normalizeServerDeadlineOptions(options);
  const lateWrites = countLateWrites(normalized);
  const onError = options.onError;
  const admission = checkAdmission(options.admission);
  const routeKey = checkRouteKey<IncomingMessage>(options.routeKey);
  const trust = createRequestTrust<IncomingMessage>(options.trust);
  const idempotency = checkIdempotency(options.idempotency);
  const handle = async (request: DeadlineIncomingMessage, res: ServerResponse, criticality: Criticality) => {
    try {
      await runInScope(hopTallyOf(res), () =>
        withRequestCriticality(criticality, () =>
          withDeadline(request.deadline, () => handler(request, res)),
        ),
      );
    } catch (error) {
      if (!res.headersSent && !res.writableEnded) {
        const deadlineError = findDeadlineError(error);
        if (deadlineError !== undefined) sendDeadlineResponse(res, deadlineError);
        else {
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('Internal Server Error');
        }
      }
      onError?.(error, request);
    }
  };
  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const scope = openDeadlineScope(req, res, normalized, trust.deadline(req, req.headers), (error) =>
      sendDeadlineResponse(res, error),
    );
    const request = req as DeadlineIncomingMessage;
    request.deadline = scope.deadline;
    const criticality = trust.criticality(req, req.headers);
    if (scope.expired) {
      admission?.countExpired(routeKey?.(req) ?? ANY_ROUTE, criticality);
      sendDeadlineResponse(res, new DeadlineExceededError('The request arrived after its deadline.'));
      return;
    }
    if (idempotency !== undefined) {
      const run = (): void => void admit(request, res, criticality);
      return idempotency.handle(req, res, scope.deadline, run, undefined, undefined, scope.arrivalMs);
    }
    return admit(request, res, criticality);
  };
  const admit = (
    request: DeadlineIncomingMessage,
    res: ServerResponse,
    criticality: Criticality,
  ): Promise<void> | undefined => {
    if (admission === undefined) return handle(request, res, criticality);
    offerRequest(
      admission,
      routeKey?.(request) ?? ANY_ROUTE,
      request.deadline,
      res,
      criticality,
      () => void handle(request, res, criticality),
      (refusal) => sendRefusal(res, refusal),
    );
    return undefined;
  };
  return Object.defineProperty(listener, 'lateWrites', {
    get: lateWrites,
    enumerable: true,
  }) as typeof listener & {
    readonly lateWrites: number;
  };
}
