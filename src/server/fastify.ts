/**
 * `prazo/fastify`: deadlines for Fastify 5 applications.
 *
 * @packageDocumentation
 */
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { Admission } from '../admission/admission.js';
import { withDeadline } from '../deadline/context.js';
import { withRequestCriticality } from '../deadline/criticality-context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError, InvalidOptionError } from '../errors.js';
import type { Criticality } from '../wire/criticality-header.js';
import { ANY_ROUTE, checkAdmission, refusalBody, refusalHeaders } from './admission-response.js';
import {
  DEADLINE_STATUS,
  deadlineErrorBody,
  findDeadlineError,
  hopTallyOf,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  runInScope,
  type ServerDeadlineOptions,
} from './deadline-scope.js';
import { checkIdempotency } from './idempotency/check-idempotency.js';
import type { Idempotency } from './idempotency/idempotency.js';
import { createRequestTrust } from './trust.js';

export * from './admission-exports.js';
export type { ServerDeadlineOptions, ServerTimingPolicy } from './deadline-scope.js';
export { deadlineErrorBody, findDeadlineError, isDeadlineError } from './deadline-scope.js';
export * from './idempotency/idempotency-exports.js';
export type { ServerTrust, TrustByHeader, TrustPolicy } from './trust.js';

/** Options of {@link deadlinePlugin}. */
export interface DeadlinePluginOptions extends ServerDeadlineOptions<FastifyRequest> {
  /**
   * Answer 504 (prazo's JSON body, no stack trace) for a `DEADLINE_EXCEEDED` /
   * `DEADLINE_INSUFFICIENT` error, or an error whose `cause` chain holds one, from every route
   * declared after the plugin: a route error handler runs before the error handler of its scope,
   * which gets every other error. `false` leaves them all to your `setErrorHandler` (map them there
   * with {@link findDeadlineError} and {@link deadlineErrorBody}).
   * @default true
   */
  answerDeadlineErrors?: boolean;
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

type RouteErrorHandler = (
  this: unknown,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) => unknown;

/**
 * A route error handler that answers deadline errors and hands every other one to `next` (the
 * route's own handler) or, without one, back to Fastify (which goes on to the scope's handler).
 */
function answerDeadlineErrors(next: RouteErrorHandler | undefined): RouteErrorHandler {
  return function (this: unknown, error, request, reply) {
    const deadlineError = findDeadlineError(error);
    if (deadlineError === undefined) {
      if (next !== undefined) return next.call(this, error, request, reply);
      throw error;
    }
    // prazo already answered 504 at the deadline: this error is the handler's expected end.
    if (reply.sent) return undefined;
    return reply.code(DEADLINE_STATUS).send(deadlineErrorBody(deadlineError));
  };
}

const plugin: FastifyPluginCallback<DeadlinePluginOptions> = (fastify, options, done) => {
  let normalized: ReturnType<typeof normalizeServerDeadlineOptions>;
  let admission: Admission | undefined;
  let trust: ReturnType<typeof createRequestTrust<FastifyRequest>>;
  let idempotency: ReturnType<typeof checkIdempotency>;
  const answerErrors = options.answerDeadlineErrors ?? true;
  try {
    normalized = normalizeServerDeadlineOptions(options);
    admission = checkAdmission(options.admission);
    trust = createRequestTrust<FastifyRequest>(options.trust);
    idempotency = checkIdempotency(options.idempotency);
    if (typeof answerErrors !== 'boolean')
      throw new InvalidOptionError('answerDeadlineErrors', 'a boolean', answerErrors);
  } catch (error) {
    // A callback plugin reports a bad option through done(): register() / ready() reject with it.
    done(error as Error);
    return;
  }
  const accepted = new WeakMap<FastifyRequest, Criticality>();
  fastify.decorateRequest('deadline');

  if (answerErrors)
    fastify.addHook('onRoute', (route) => {
      route.errorHandler = answerDeadlineErrors(route.errorHandler as RouteErrorHandler | undefined);
    });

  fastify.addHook('onRequest', (request, reply, next) => {
    const scope = openDeadlineScope(
      request.raw,
      reply.raw,
      normalized,
      trust.deadline(request, request.raw.headers),
      (error) => {
        if (!reply.sent) void reply.code(DEADLINE_STATUS).send(deadlineErrorBody(error));
      },
    );
    request.deadline = scope.deadline;
    const criticality = trust.criticality(request, request.raw.headers);
    if (criticality !== 'default') accepted.set(request, criticality);
    if (scope.expired) {
      admission?.countExpired(routeOf(request), criticality);
      // Answering from an onRequest hook without calling next() ends the lifecycle here.
      void reply
        .code(DEADLINE_STATUS)
        .send(deadlineErrorBody(new DeadlineExceededError('The request arrived after its deadline.')));
      return;
    }
    const go = (): void =>
      runInScope(scope.hop, () =>
        withRequestCriticality(criticality, () => withDeadline(scope.deadline, next)),
      );
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
          scope.hop?.handlerStarted();
          go();
        },
        (refusal) => {
          if (!reply.sent)
            void reply.code(refusal.status).headers(refusalHeaders(refusal)).send(refusalBody(refusal));
        },
      );
    };
    if (idempotency === undefined) return admit();
    idempotency.handle(
      request.raw,
      reply.raw,
      scope.deadline,
      admit,
      (status, headers, body) => {
        if (!reply.sent) void reply.code(status).headers(headers).send(body);
      },
      undefined,
      scope.arrivalMs,
    );
  });
  // Body parsing resumes from stream events, outside the context entered above: enter it again right
  // before the handler so that currentDeadline() works there too.
  fastify.addHook('preHandler', (request, reply, next) => {
    const criticality = accepted.get(request) ?? 'default';
    runInScope(hopTallyOf(reply.raw), () =>
      withRequestCriticality(criticality, () => withDeadline(request.deadline, next)),
    );
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
 * - Reads `x-deadline-epoch-ms` (or `grpc-timeout`) of a caller the `trust` option accepts (the
 *   predicate gets the `FastifyRequest`: `request.ip` follows Fastify's `trustProxy`), capped at
 *   now + `maxMs`, else now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once** from `onRequest`; the handler does not run.
 * - Decorates `request.deadline`; the handler runs inside {@link withDeadline}.
 * - At the limit `request.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 * - Everything armed is released when the response finishes or the client disconnects.
 * - `x-criticality` (`critical`, `default`, `sheddable`) of a trusted caller becomes the ambient
 *   criticality that prazo's client forwards on the handler's calls.
 * - With `admission`, a request may be refused from `onRequest`: 504 when its deadline is shorter
 *   than the route's expected service time, 503 + `Retry-After` when the server sheds load.
 * - A deadline error a route throws — prazo's own, or wrapped in the `cause` of fetch's `TypeError`
 *   or an SDK's error — is answered **504** with prazo's JSON body, on every route declared after
 *   the plugin (`answerDeadlineErrors: false` to map them yourself); every other error goes to your
 *   `setErrorHandler` or Fastify's default one (which sends `{ statusCode, error, message }`, never
 *   a stack trace).
 *
 * @throws {@link InvalidOptionError} for bad options: `register()` and `ready()` reject with it.
 * @example
 * await app.register(deadlinePlugin, { defaultMs: 1000, maxMs: 5000, trust: (request) => isMeshPeer(request) });
 * app.get('/stock', (request) => callWithDeadline(request.deadline, { name: 'supplier', p99Ms: 250, run }));
 */
export const deadlinePlugin: FastifyPluginCallback<DeadlinePluginOptions> = Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'prazo-deadline',
  [Symbol.for('plugin-meta')]: { name: 'prazo-deadline', fastify: '5.x' },
});
