/**
 * `prazo/fastify`: deadlines for Fastify 5 applications.
 *
 * @packageDocumentation
 */
import type { FastifyPluginCallback } from 'fastify';
import type { Admission } from '../admission/admission.js';
import { withRequestCriticality } from '../admission/criticality-context.js';
import { withDeadline } from '../deadline/context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError } from '../errors.js';
import { CRITICALITY_HEADER, parseCriticality } from '../wire/criticality-header.js';
import { ANY_ROUTE, checkAdmission, refusalBody, refusalHeaders } from './admission-response.js';
import {
  DEADLINE_STATUS,
  deadlineErrorBody,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  type ServerDeadlineOptions,
} from './deadline-scope.js';
import { checkIdempotency } from './idempotency/check-idempotency.js';
import type { Idempotency } from './idempotency/idempotency.js';

export * from './admission-exports.js';
export type { ServerDeadlineOptions } from './deadline-scope.js';
export { deadlineErrorBody, isDeadlineError } from './deadline-scope.js';
export * from './idempotency/idempotency-exports.js';

/** Options of {@link deadlinePlugin}. */
export interface DeadlinePluginOptions extends ServerDeadlineOptions {
  /**
   * Deadline-aware admission (`createAdmission()`), per route (`request.routeOptions.url`): 504 for a
   * deadline shorter than the route's expected service time, 503 + `Retry-After` when it sheds load.
   * See docs/overload.md.
   * @default undefined (every request with time left runs)
   */
  admission?: Admission;
  /**
   * Deduplication of requests by `Idempotency-Key` (`createIdempotency()`), from `onRequest`, before
   * admission: the first request with a key runs, a repeat gets its stored response. See
   * docs/idempotency.md.
   * @default undefined (no deduplication)
   */
  idempotency?: Idempotency;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's deadline, set by prazo's `deadlinePlugin`. Its `signal` aborts at the limit or when
     * the client disconnects.
     */
    deadline: Deadline;
  }
}

const plugin: FastifyPluginCallback<DeadlinePluginOptions> = (fastify, options, done) => {
  const normalized = normalizeServerDeadlineOptions(options);
  const admission = checkAdmission(options.admission);
  const idempotency = checkIdempotency(options.idempotency);
  fastify.decorateRequest('deadline');

  fastify.addHook('onRequest', (request, reply, next) => {
    const scope = openDeadlineScope(request.raw, reply.raw, normalized, (error) => {
      if (!reply.sent) void reply.code(DEADLINE_STATUS).send(deadlineErrorBody(error));
    });
    request.deadline = scope.deadline;
    const criticality = parseCriticality(request.headers[CRITICALITY_HEADER]);
    if (scope.expired) {
      admission?.countExpired(routeOf(request), criticality);
      // Answering from an onRequest hook without calling next() ends the lifecycle here.
      void reply
        .code(DEADLINE_STATUS)
        .send(deadlineErrorBody(new DeadlineExceededError('The request arrived after its deadline.')));
      return;
    }
    const go = (): void => withRequestCriticality(criticality, () => withDeadline(scope.deadline, next));
    const admit = (): void => {
      if (admission === undefined) {
        go();
        return;
      }
      admission.offer(
        routeOf(request),
        scope.deadline,
        criticality,
        (ticket) => {
          scope.onRelease((finished) => ticket.release(finished));
          go();
        },
        (refusal) => {
          if (!reply.sent)
            void reply.code(refusal.status).headers(refusalHeaders(refusal)).send(refusalBody(refusal));
        },
      );
    };
    if (idempotency === undefined) return admit();
    idempotency.handle(request.raw, reply.raw, scope.deadline, admit, (status, headers, body) => {
      if (!reply.sent) void reply.code(status).headers(headers).send(body);
    });
  });
  // Body parsing resumes from stream events, outside the context entered above: enter it again right
  // before the handler so that currentDeadline() works there too.
  fastify.addHook('preHandler', (request, _reply, next) => {
    const criticality = parseCriticality(request.headers[CRITICALITY_HEADER]);
    withRequestCriticality(criticality, () => withDeadline(request.deadline, next));
  });
  done();
};

/** The admission route key of a request: method and route pattern, `*` when no route matched. */
function routeOf(request: { method: string; routeOptions: { url?: string | undefined } }): string {
  const url = request.routeOptions.url;
  return url === undefined ? ANY_ROUTE : `${request.method} ${url}`;
}

/**
 * Fastify plugin that puts every request under its deadline (not encapsulated: it applies to the
 * instance it is registered on and all its children, like a `fastify-plugin`-wrapped plugin).
 *
 * - Reads `x-deadline-epoch-ms` (or `grpc-timeout`) capped at now + `maxMs`, else now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once** from `onRequest`; the handler does not run.
 * - Decorates `request.deadline`; the handler runs inside {@link withDeadline}.
 * - At the limit `request.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 * - Everything armed is released when the response finishes or the client disconnects.
 * - `x-criticality` (`critical`, `default`, `sheddable`) becomes the ambient criticality that
 *   prazo's client forwards on the handler's calls.
 * - With `admission`, a request may be refused from `onRequest`: 504 when its deadline is shorter
 *   than the route's expected service time, 503 + `Retry-After` when the server sheds load.
 * - Errors the handler throws go to Fastify's error handler; map them with `isDeadlineError()` and
 *   `deadlineErrorBody()` in `setErrorHandler` to answer 504.
 *
 * @throws {@link InvalidOptionError} at registration for bad options.
 * @example
 * await app.register(deadlinePlugin, { defaultMs: 1000, maxMs: 5000 });
 * app.get('/stock', (request) => callWithDeadline(request.deadline, { name: 'supplier', p99Ms: 250, run }));
 */
export const deadlinePlugin: FastifyPluginCallback<DeadlinePluginOptions> = Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'prazo-deadline',
  [Symbol.for('plugin-meta')]: { name: 'prazo-deadline', fastify: '5.x' },
});
