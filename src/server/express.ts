/**
 * `prazo/express`: deadlines for Express 5 applications.
 *
 * @packageDocumentation
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { withDeadline } from '../deadline/context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError } from '../errors.js';
import {
  countLateWrites,
  isDeadlineError,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  type ServerDeadlineOptions,
  sendDeadlineResponse,
  wasAnsweredAtDeadline,
} from './deadline-scope.js';

export type { ServerDeadlineOptions } from './deadline-scope.js';
export { deadlineErrorBody, isDeadlineError } from './deadline-scope.js';

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
 * - Reads `x-deadline-epoch-ms` (or `grpc-timeout`) capped at now + `maxMs`, else now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once**; the rest of the chain does not run.
 * - Sets `req.deadline` and runs the rest of the chain inside {@link withDeadline}. Mount it **after**
 *   body parsers: a parser that resumes the chain from a stream event loses the ambient context
 *   (`req.deadline` is always there).
 * - At the limit `req.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 * - A handler that writes after that 504 (`res.json(…)` once its work finally ends) is not an error:
 *   the late write is dropped quietly and counted in `lateWrites` (and `onLateWrite` is called).
 * - Everything armed is released when the response finishes or the client disconnects.
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * app.use(express.json(), deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }));
 */
export function deadlineMiddleware(
  options: ServerDeadlineOptions,
): RequestHandler & { readonly lateWrites: number } {
  const normalized = normalizeServerDeadlineOptions(options);
  const lateWrites = countLateWrites(normalized);
  const middleware: RequestHandler = (req, res, next) => {
    const scope = openDeadlineScope(req, res, normalized, (error) => sendDeadlineResponse(res, error));
    req.deadline = scope.deadline;
    if (scope.expired) {
      sendDeadlineResponse(res, new DeadlineExceededError('The request arrived after its deadline.'));
      return;
    }
    withDeadline(scope.deadline, () => next());
  };
  return Object.defineProperty(middleware, 'lateWrites', {
    get: lateWrites,
    enumerable: true,
  }) as RequestHandler & {
    readonly lateWrites: number;
  };
}

/**
 * Express error middleware that answers 504 with a JSON body for `DEADLINE_EXCEEDED` and
 * `DEADLINE_INSUFFICIENT` errors, and passes every other error on. A deadline error raised after
 * prazo already answered 504 at the deadline is the expected end of that handler: it is dropped.
 * Mount it after your routes.
 * @example app.use(deadlineErrorHandler());
 */
export function deadlineErrorHandler(): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (!isDeadlineError(error)) return next(error);
    if (res.headersSent) return wasAnsweredAtDeadline(res) ? undefined : next(error);
    sendDeadlineResponse(res, error);
  };
}
