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
  isDeadlineError,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  type ServerDeadlineOptions,
  sendDeadlineResponse,
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
 * - Everything armed is released when the response finishes or the client disconnects.
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * app.use(express.json(), deadlineMiddleware({ defaultMs: 1000, maxMs: 5000 }));
 */
export function deadlineMiddleware(options: ServerDeadlineOptions): RequestHandler {
  const normalized = normalizeServerDeadlineOptions(options);
  return (req, res, next) => {
    const scope = openDeadlineScope(req, res, normalized, (error) => sendDeadlineResponse(res, error));
    req.deadline = scope.deadline;
    if (scope.expired) {
      sendDeadlineResponse(res, new DeadlineExceededError('The request arrived after its deadline.'));
      return;
    }
    withDeadline(scope.deadline, () => next());
  };
}

/**
 * Express error middleware that answers 504 with a JSON body for `DEADLINE_EXCEEDED` and
 * `DEADLINE_INSUFFICIENT` errors, and passes every other error on. Mount it after your routes.
 * @example app.use(deadlineErrorHandler());
 */
export function deadlineErrorHandler(): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (!isDeadlineError(error)) return next(error);
    if (res.headersSent) return next(error);
    sendDeadlineResponse(res, error);
  };
}
