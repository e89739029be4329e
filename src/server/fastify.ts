/**
 * `prazo/fastify`: deadlines for Fastify 5 applications.
 *
 * @packageDocumentation
 */
import type { FastifyPluginCallback } from 'fastify';
import { withDeadline } from '../deadline/context.js';
import type { Deadline } from '../deadline/deadline.js';
import { DeadlineExceededError } from '../errors.js';
import {
  DEADLINE_STATUS,
  deadlineErrorBody,
  normalizeServerDeadlineOptions,
  openDeadlineScope,
  type ServerDeadlineOptions,
} from './deadline-scope.js';

export type { ServerDeadlineOptions } from './deadline-scope.js';
export { deadlineErrorBody, isDeadlineError } from './deadline-scope.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's deadline, set by prazo's `deadlinePlugin`. Its `signal` aborts at the limit or when
     * the client disconnects.
     */
    deadline: Deadline;
  }
}

const plugin: FastifyPluginCallback<ServerDeadlineOptions> = (fastify, options, done) => {
  const normalized = normalizeServerDeadlineOptions(options);
  fastify.decorateRequest('deadline');

  fastify.addHook('onRequest', (request, reply, next) => {
    const scope = openDeadlineScope(request.raw, reply.raw, normalized, (error) => {
      if (!reply.sent) void reply.code(DEADLINE_STATUS).send(deadlineErrorBody(error));
    });
    request.deadline = scope.deadline;
    if (scope.expired) {
      // Answering from an onRequest hook without calling next() ends the lifecycle here.
      void reply
        .code(DEADLINE_STATUS)
        .send(deadlineErrorBody(new DeadlineExceededError('The request arrived after its deadline.')));
      return;
    }
    withDeadline(scope.deadline, next);
  });
  // Body parsing resumes from stream events, outside the context entered above: enter it again right
  // before the handler so that currentDeadline() works there too.
  fastify.addHook('preHandler', (request, _reply, next) => {
    withDeadline(request.deadline, next);
  });
  done();
};

/**
 * Fastify plugin that puts every request under its deadline (not encapsulated: it applies to the
 * instance it is registered on and all its children, like a `fastify-plugin`-wrapped plugin).
 *
 * - Reads `x-deadline-epoch-ms` (or `grpc-timeout`) capped at now + `maxMs`, else now + `defaultMs`.
 * - A request that arrives already expired gets **504 at once** from `onRequest`; the handler does not run.
 * - Decorates `request.deadline`; the handler runs inside {@link withDeadline}.
 * - At the limit `request.deadline.signal` aborts and, if nothing was sent yet, prazo answers 504.
 * - Everything armed is released when the response finishes or the client disconnects.
 * - Errors the handler throws go to Fastify's error handler; map them with `isDeadlineError()` and
 *   `deadlineErrorBody()` in `setErrorHandler` to answer 504.
 *
 * @throws {@link InvalidOptionError} at registration for bad options.
 * @example
 * await app.register(deadlinePlugin, { defaultMs: 1000, maxMs: 5000 });
 * app.get('/stock', (request) => callWithDeadline(request.deadline, { name: 'supplier', p99Ms: 250, run }));
 */
export const deadlinePlugin: FastifyPluginCallback<ServerDeadlineOptions> = Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'prazo-deadline',
  [Symbol.for('plugin-meta')]: { name: 'prazo-deadline', fastify: '5.x' },
});
