/**
 * `prazo/express`: deadlines for Express 5 applications.
 *
 * @packageDocumentation
 */
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Admission } from '../admission/admission.js';
import { withDeadline } from '../deadline/context.js';
import { withRequestCriticality } from '../deadline/criticality-context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError, InvalidOptionError } from '../errors.js';
import type { Criticality } from '../wire/criticality-header.js';
import { ANY_ROUTE, checkAdmission, checkRouteKey, offerRequest, sendRefusal } from './admission-response.js';
import {
  countLateWrites,
  findDeadlineError,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  runInScope,
  type ServerDeadlineOptions,
  sendDeadlineResponse,
  wasAnsweredAtDeadline,
} from './deadline-scope.js';
import { checkIdempotency } from './idempotency/check-idempotency.js';
import type { Idempotency } from './idempotency/idempotency.js';
import { createRequestTrust } from './trust.js';

export * from './admission-exports.js';
export type { ServerDeadlineOptions, ServerTimingPolicy } from './deadline-scope.js';
export { deadlineErrorBody, findDeadlineError, isDeadlineError } from './deadline-scope.js';
export * from './idempotency/idempotency-exports.js';
export type { ServerTrust, TrustByHeader, TrustPolicy } from './trust.js';

/** The criticality `deadlineMiddleware()` accepted for a request, read by `admissionMiddleware()`. */
const accepted = new WeakMap<object, Criticality>();

declare global {
  namespace Express {
    interface Request {
      /**
       * The request's deadline, set by prazo's `deadlineMiddleware()` (absent on routes it does not cover).
       * Its `signal` aborts at the limit or when the client disconnects.
       */
      deadline: Deadline;
    }
  }
}

/**
 * Express middleware that puts every request under its deadline.
 *
 * - Reads `x-deadline-epoch-ms` (or `grpc-timeout`) of a caller the `trust` option accepts, capped
 *   at now + `maxMs`, else now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once**; the rest of the chain does not run.
 * - Sets `req.deadline` and runs the rest of the chain inside {@link withDeadline}. Mount it **after**
 *   body parsers: a parser that resumes the chain from a stream event loses the ambient context
 *   (`req.deadline` is always there).
 * - At the limit `req.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 * - A handler that writes after that 504 (`res.json(…)` once its work finally ends) is not an error:
 *   the late write is dropped quietly and counted in `lateWrites` (and `onLateWrite` is called).
 * - Everything armed is released when the response finishes or the client disconnects.
 * - `x-criticality` (`critical`, `default`, `sheddable`) of a trusted caller becomes the ambient
 *   criticality that prazo's client forwards on the handler's calls, and the one
 *   {@link admissionMiddleware} sheds by.
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * app.use(express.json(), deadlineMiddleware({ defaultMs: 1000, maxMs: 5000, trust: 'none' }));
 */
export function deadlineMiddleware(
  options: ServerDeadlineOptions<Request>,
): RequestHandler & { readonly lateWrites: number } {
  const normalized = normalizeServerDeadlineOptions(options);
  const lateWrites = countLateWrites(normalized);
  const trust = createRequestTrust<Request>(options.trust);
  const middleware: RequestHandler = (req, res, next) => {
    const scope = openDeadlineScope(req, res, normalized, trust.deadline(req, req.headers), (error) =>
      sendDeadlineResponse(res, error),
    );
    req.deadline = scope.deadline;
    if (scope.expired) {
      sendDeadlineResponse(res, new DeadlineExceededError('The request arrived after its deadline.'));
      return;
    }
    const criticality = trust.criticality(req, req.headers);
    if (criticality !== 'default') accepted.set(req, criticality);
    runInScope(scope.hop, () =>
      withRequestCriticality(criticality, () => withDeadline(scope.deadline, () => next())),
    );
  };
  return Object.defineProperty(middleware, 'lateWrites', {
    get: lateWrites,
    enumerable: true,
  }) as RequestHandler & {
    readonly lateWrites: number;
  };
}

/**
 * Express error middleware that answers 504 with a JSON body (`{ error: { code, message, … } }`, no
 * stack trace) for `DEADLINE_EXCEEDED` and `DEADLINE_INSUFFICIENT` errors — thrown by
 * `dependency().request`, or wrapped in the `cause` of fetch's `TypeError` or an SDK's error (see
 * {@link findDeadlineError}) — and passes every other error on. A deadline error raised after
 * prazo already answered 504 at the deadline is the expected end of that handler: it is dropped; one
 * raised after the handler started its own response goes on to Express, which closes the connection.
 *
 * Mount it after your routes. The errors it passes on reach your error handlers or Express's
 * final handler, whose 500 page shows the stack trace unless `NODE_ENV` is `production`: end the
 * chain with an error handler of your own in any other environment a client can reach.
 * @example app.use(deadlineErrorHandler());
 */
export function deadlineErrorHandler(): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const deadlineError = findDeadlineError(error);
    if (deadlineError === undefined) return next(error);
    if (res.headersSent) return wasAnsweredAtDeadline(res) ? undefined : next(error);
    sendDeadlineResponse(res, deadlineError);
  };
}

/** Options of {@link admissionMiddleware}. */
export interface AdmissionMiddlewareOptions {
  /**
   * The route a request counts under. Return a route pattern, never a raw URL: only
   * `admission.maxRoutes` keys are tracked.
   * @default on a route (`app.get(path, admissionMiddleware(a), handler)`): `'GET /base/path'` from
   *   `req.baseUrl` and `req.route.path`; mounted with `app.use`: `'*'`
   */
  routeKey?: (req: Request) => string;
}

/**
 * Express middleware that puts requests through deadline-aware admission (see docs/overload.md).
 * Mount it **after** {@link deadlineMiddleware}, on each route (so that every route gets its own
 * service times) or app-wide with a `routeKey`. Share one `admission` between the routes it protects:
 * its in-flight limit counts them together.
 *
 * - Refuses with **504** a request whose remaining deadline is below the route's expected service
 *   time; admits everything while the route has too few samples.
 * - With `maxInFlight`, queues beyond the limit (CoDel, adaptive LIFO) and answers **503 +
 *   `Retry-After`** when it sheds; a queued request whose deadline passes gets 504 at once and never
 *   reaches the handler. `sheddable` requests are shed first, `critical` ones last — by the
 *   criticality {@link deadlineMiddleware} accepted (its `trust` option), `default` otherwise.
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * const admission = createAdmission({ maxInFlight: 64 });
 * app.use(deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }));
 * app.get('/orders/:id', admissionMiddleware(admission), getOrder);
 */
export function admissionMiddleware(
  admission: Admission,
  options: AdmissionMiddlewareOptions = {},
): RequestHandler {
  const checked = checkAdmission(admission);
  if (checked === undefined)
    throw new InvalidOptionError('admission', 'the result of createAdmission()', admission);
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object', options);
  const routeKey = checkRouteKey<Request>(options.routeKey);
  return (req, res, next) => {
    const deadline = req.deadline as Deadline | undefined;
    if (deadline === undefined) {
      next(
        new InvalidOptionError(
          'admissionMiddleware',
          'mounted after deadlineMiddleware() (req.deadline is missing)',
          undefined,
        ),
      );
      return;
    }
    const route =
      routeKey?.(req) ??
      (req.route === undefined ? ANY_ROUTE : `${req.method} ${req.baseUrl}${String(req.route.path)}`);
    offerRequest(
      checked,
      route,
      deadline,
      res,
      accepted.get(req) ?? 'default',
      () => next(),
      (refusal) => sendRefusal(res, refusal),
    );
  };
}

/**
 * Express middleware that deduplicates requests by `Idempotency-Key` (see `createIdempotency()` and
 * docs/idempotency.md): the first request with a key runs, a repeat gets the stored response
 * (`Idempotent-Replayed: true`), the key with another request gets 422. Mount it **after**
 * {@link deadlineMiddleware} (it reads `req.deadline`), before or after the body parsers: before
 * them the body is fingerprinted from its bytes, after them from what the parser made of it (the
 * same placement on every replica).
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * const idempotency = createIdempotency({ store: createRedisIdempotencyStore({ client: redis }) });
 * app.use(deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }), idempotencyMiddleware(idempotency), express.json());
 */
export function idempotencyMiddleware(idempotency: Idempotency): RequestHandler {
  const checked = checkIdempotency(idempotency);
  if (checked === undefined)
    throw new InvalidOptionError('idempotency', 'the result of createIdempotency()', idempotency);
  return (req, res, next) => {
    const deadline = req.deadline as Deadline | undefined;
    if (deadline === undefined) {
      next(
        new InvalidOptionError(
          'idempotencyMiddleware',
          'mounted after deadlineMiddleware() (req.deadline is missing)',
          undefined,
        ),
      );
      return;
    }
    checked.handle(req, res, deadline, () => next());
  };
}
