import { DeadlineExceededError } from '../errors.js';
import type { Call } from './call.js';
import type { TimerEntry } from './coarse-timer.js';
import { IncomingBody } from './incoming-body.js';
import type { DependencyContext } from './pipeline.js';
import type { ResponseBody } from './response.js';

/** The part of a response body the guard needs: undici's body is a Readable. */
interface GuardedBody {
  destroy(error?: Error): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Holds a response body to the call's deadline. The attempt's timer stops at the response headers,
 * but the connection stays taken until the body has been read: a body that drips (or a caller that
 * never reads it) would hold it past the deadline, which is exactly what a deadline is for. At the
 * deadline the body is destroyed with `DEADLINE_EXCEEDED` — the caller's read rejects, and the
 * connection is released. The guard leaves the shared timer as soon as the body closes (read to the
 * end, dumped or destroyed).
 */
export function guardBody(ctx: DependencyContext, call: Call, body: ResponseBody): void {
  if (body instanceof IncomingBody) {
    // prazo's own body leaves the timer when it ends: no listener, no closure.
    body.watch(ctx.timer, new BodyDeadline(ctx.name, call.limitMs, body));
    return;
  }
  const stream = body as unknown as Partial<GuardedBody>;
  if (typeof stream.once !== 'function' || typeof stream.destroy !== 'function') return;
  const entry = new BodyDeadline(ctx.name, call.limitMs, stream as GuardedBody);
  ctx.timer.add(entry);
  stream.once('close', () => ctx.timer.delete(entry));
}

/** The shared-timer entry that destroys a body still open at the call's deadline. */
class BodyDeadline implements TimerEntry {
  readonly dueAt: number;
  readonly #name: string;
  readonly #body: { destroy(error?: Error): unknown };

  constructor(name: string, dueAt: number, body: { destroy(error?: Error): unknown }) {
    this.#name = name;
    this.dueAt = dueAt;
    this.#body = body;
  }

  onDue(): void {
    this.#body.destroy(
      new DeadlineExceededError(`Deadline exceeded while reading the response body of ${this.#name}.`),
    );
  }
}
