import { AsyncLocalStorage } from 'node:async_hooks';
import type { Deadline } from './deadline.js';

// Private on purpose: the only ways in are withDeadline() and currentDeadline(), so nobody can widen
// the ambient deadline by writing to the store directly.
const storage = new AsyncLocalStorage<Deadline>();

/**
 * Runs `fn` with an ambient deadline that code further down the call (and its awaits) can read with
 * {@link currentDeadline}. The effective deadline is the **tighter** of the one already ambient and
 * `deadline`: a nested scope can only tighten, never extend.
 *
 * An explicit `deadline` given to a call (`dependency.request({ deadline })`) is combined with the
 * ambient one the same way: the earlier of the two wins, so it can shorten a call, never lengthen it.
 *
 * @returns What `fn` returns (a promise stays a promise).
 * @example
 * await withDeadline(Deadline.after(1900), () => handleOrder(req));
 * @see Go's `context.WithDeadline`: "no later than d".
 */
export function withDeadline<T>(deadline: Deadline, fn: () => T): T {
  const ambient = storage.getStore();
  const effective = ambient !== undefined && ambient.limitMs <= deadline.limitMs ? ambient : deadline;
  return storage.run(effective, fn);
}

/** The ambient deadline set by the nearest {@link withDeadline} (or a server adapter), if any. */
export function currentDeadline(): Deadline | undefined {
  return storage.getStore();
}
