/**
 * `prazo/http`: deadlines for plain `node:http` servers.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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
} from './deadline-scope.js';

export type { ServerDeadlineOptions } from './deadline-scope.js';
export { deadlineErrorBody, isDeadlineError } from './deadline-scope.js';

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
export interface DeadlineHandlerOptions extends ServerDeadlineOptions {
  /**
   * Called with an error the handler threw or rejected with (after prazo answered 504 or 500 when
   * nothing was sent yet). Use it to log.
   * @default ignore
   */
  onError?: (error: unknown, req: IncomingMessage) => void;
}

/**
 * Wraps a `node:http` handler so that every request runs under its deadline.
 *
 * - The deadline comes from `x-deadline-epoch-ms` (or `grpc-timeout`), capped at now + `maxMs`;
 *   without a usable header it is now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once**; the handler does not run.
 * - The handler runs inside {@link withDeadline} (so `currentDeadline()` works) with `req.deadline`.
 * - At the limit `req.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 *   If the client disconnects first the signal aborts with `CANCELLED`.
 * - A handler that throws: 504 for `DEADLINE_EXCEEDED` / `DEADLINE_INSUFFICIENT`, 500 otherwise (when
 *   nothing was sent), then `onError`. The returned listener never rejects.
 * - A handler that writes after prazo's 504 has its late writes dropped quietly (no
 *   `ERR_HTTP_HEADERS_SENT`), counted in `lateWrites` on the returned listener and reported to
 *   `onLateWrite`.
 * - The timer and listeners are released when the response finishes or the connection closes.
 *
 * @throws {@link InvalidOptionError} at setup for bad options.
 * @example
 * http.createServer(withDeadlineHandler(async (req, res) => {
 *   const stock = await callWithDeadline(req.deadline, { name: 'supplier', p99Ms: 250, run });
 *   res.end(JSON.stringify(stock));
 * }, { defaultMs: 1000, maxMs: 5000 }));
 */
export function withDeadlineHandler(
  handler: DeadlineRequestHandler,
  options: DeadlineHandlerOptions,
): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & { readonly lateWrites: number } {
  const normalized = normalizeServerDeadlineOptions(options);
  const lateWrites = countLateWrites(normalized);
  const onError = options.onError;
  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const scope = openDeadlineScope(req, res, normalized, (error) => sendDeadlineResponse(res, error));
    const request = req as DeadlineIncomingMessage;
    request.deadline = scope.deadline;
    if (scope.expired) {
      sendDeadlineResponse(res, new DeadlineExceededError('The request arrived after its deadline.'));
      return;
    }
    try {
      await withDeadline(scope.deadline, () => handler(request, res));
    } catch (error) {
      if (!res.headersSent && !res.writableEnded) {
        if (isDeadlineError(error)) sendDeadlineResponse(res, error);
        else {
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('Internal Server Error');
        }
      }
      onError?.(error, req);
    }
  };
  return Object.defineProperty(listener, 'lateWrites', {
    get: lateWrites,
    enumerable: true,
  }) as typeof listener & {
    readonly lateWrites: number;
  };
}
