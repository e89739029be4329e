import type { Timer } from '../clock.js';
import {
  CancelledError,
  DeadlineExceededError,
  DeadlineInsufficientError,
  InvalidOptionError,
  isPrazoError,
} from '../errors.js';
import type { Deadline } from './deadline.js';

/** What {@link callWithDeadline} hands to `run`. */
export interface DeadlineCallContext {
  /** Aborts at the deadline (reason `DEADLINE_EXCEEDED`) or when the caller's signal aborts (`CANCELLED`). */
  signal: AbortSignal;
  /** Milliseconds left when the call started: the longest the attempt may take. */
  timeoutMs: number;
  /** `{ 'x-deadline-epoch-ms': … }` to send to the dependency so it honours the same limit. */
  headers: Record<string, string>;
}

/** Options of {@link callWithDeadline}. */
export interface CallWithDeadlineOptions<T> {
  /** The dependency's healthy p99 latency, in ms: the least remaining time worth starting a call with. */
  p99Ms: number;
  /** The dependency's name, for errors and logs. */
  name: string;
  /** The caller's own signal: when it aborts, the call is cancelled (`CANCELLED`). */
  signal?: AbortSignal;
  /** Performs the call. Must honour `signal`. */
  run: (context: DeadlineCallContext) => Promise<T>;
}

/**
 * Calls a dependency only if the remaining time can hold its p99, and never past the deadline.
 *
 * - Remaining time below `p99Ms` (or none at all): throws `DEADLINE_INSUFFICIENT` with `remainingMs`,
 *   `requiredMs` and `dependency`, **without calling `run`** — the work would be thrown away anyway.
 * - Otherwise calls `run({ signal, timeoutMs, headers })`. The signal aborts at the deadline and also
 *   follows `options.signal`. If `run` rejects after such an abort, the rejection becomes
 *   `DEADLINE_EXCEEDED` or `CANCELLED` respectively, with `run`'s error as `cause`.
 * - The timer and the listener on the caller's signal are released in every outcome.
 *
 * @throws {@link DeadlineInsufficientError} · {@link DeadlineExceededError} · {@link CancelledError}
 *   (also when `options.signal` is already aborted; `run` is then not called) · whatever `run` throws
 *   otherwise · {@link InvalidOptionError} for bad options.
 * @example
 * const stock = await callWithDeadline(deadline, {
 *   name: 'supplier', p99Ms: 250,
 *   run: ({ signal, headers }) => request(url, { signal, headers }).then((r) => r.body.json()),
 * });
 * @see The source article, `chamarComPrazo`: "work that would be discarded never starts".
 */
export async function callWithDeadline<T>(
  deadline: Deadline,
  options: CallWithDeadlineOptions<T>,
): Promise<T> {
  const { p99Ms, name, signal: callerSignal, run } = options;
  if (typeof p99Ms !== 'number' || !Number.isFinite(p99Ms) || p99Ms < 0)
    throw new InvalidOptionError('p99Ms', 'a finite number of milliseconds >= 0', p99Ms);
  if (typeof name !== 'string' || name === '')
    throw new InvalidOptionError('name', 'a non-empty string', name);
  if (typeof run !== 'function') throw new InvalidOptionError('run', 'a function', run);

  if (callerSignal?.aborted)
    throw new CancelledError(`Call to ${name} cancelled before it started.`, { cause: callerSignal.reason });
  const remainingMs = deadline.remainingMs();
  if (remainingMs <= 0 || remainingMs < p99Ms) throw new DeadlineInsufficientError(name, remainingMs, p99Ms);

  const { clock } = deadline;
  const controller = new AbortController();
  let timer: Timer | undefined;
  const arm = (delayMs: number): void => {
    timer = clock.setTimeout(onTimer, delayMs);
    timer.unref();
  };
  // Timers can fire a hair early against the wall clock: re-arm until the deadline has really passed.
  const onTimer = (): void => {
    timer = undefined;
    const left = deadline.remainingMs();
    if (left > 0) arm(Math.min(left, 2_147_483_647));
    else controller.abort(new DeadlineExceededError(`Deadline exceeded while calling ${name}.`));
  };
  const onCallerAbort = (): void => {
    controller.abort(
      new CancelledError(`Call to ${name} cancelled by the caller.`, { cause: callerSignal?.reason }),
    );
  };

  arm(Math.min(remainingMs, 2_147_483_647));
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    return await run({ signal: controller.signal, timeoutMs: remainingMs, headers: deadline.toHeaders() });
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    const reason = controller.signal.reason as DeadlineExceededError | CancelledError;
    if (error === reason || isPrazoError(error, reason.code)) throw error;
    if (reason.code === 'CANCELLED') throw new CancelledError(reason.message, { cause: error });
    throw new DeadlineExceededError(reason.message, { cause: error });
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}
