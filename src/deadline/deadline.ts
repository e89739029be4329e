import type { IncomingHttpHeaders } from 'node:http';
import { type Clock, systemClock, type Timer } from '../clock.js';
import { DeadlineExceededError, InvalidOptionError } from '../errors.js';
import {
  DEADLINE_HEADER,
  GRPC_TIMEOUT_HEADER,
  type HeaderValue,
  type NormalizedDeadlineHeaderOptions,
  normalizeDeadlineHeaderOptions,
  parseDeadlineHeaderWith,
} from '../wire/deadline-header.js';
import { checkLimitMs } from './effective-limit.js';

export { DEADLINE_HEADER } from '../wire/deadline-header.js';

/** Headers as Node, a framework or the Fetch API hand them over. */
export type DeadlineHeadersInput =
  | IncomingHttpHeaders
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

/** Options of {@link Deadline.fromHeaders}. */
export interface DeadlineFromHeadersOptions {
  /** Time granted to a request without a usable deadline header, in ms from now (held to `maxMs`). */
  defaultMs: number;
  /** The longest this service holds a request, in ms from now: later limits are capped here. */
  maxMs: number;
  /**
   * Clock-skew allowance, in ms: how long after a received absolute limit a request still counts as
   * arrived in time. Never added to the deadline itself (see {@link readIncomingDeadline}). @default 0
   */
  skewMs?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** Longest delay Node's timers accept; longer ones fire after 1 ms, so we re-arm in steps. */
const MAX_TIMER_MS = 2_147_483_647;

let abortDeadline: (deadline: Deadline, reason: unknown) => void;
let watchDeadline: (deadline: Deadline, onExpire: (error: DeadlineExceededError) => void) => void;

/**
 * An absolute limit in epoch milliseconds, read through an injected clock — the instant after which
 * nobody is waiting for the answer any more. Immutable: {@link Deadline.tighten} returns a new one.
 *
 * Deadlines travel between services as an **absolute** instant (`x-deadline-epoch-ms`), not as
 * "time left", because a relative value is already stale when it reaches the third hop.
 *
 * @example
 * const deadline = Deadline.after(1900);
 * await fetch(url, { headers: deadline.toHeaders(), signal: deadline.signal });
 * deadline.dispose(); // the work finished before the limit: release the signal's timer now
 * @see The source article, "Com prazo absoluto propagado (limite = t0 + 1900ms)".
 */
export class Deadline {
  /** The limit, in epoch milliseconds. */
  readonly limitMs: number;
  /** The clock every reading and the signal's timer go through. */
  readonly clock: Clock;
  #controller: AbortController | undefined;
  #timer: Timer | undefined;
  #disposed = false;
  /** Called at the limit before the signal aborts (a server adapter's 504), without making a signal. */
  #onExpire: ((error: DeadlineExceededError) => void) | undefined;

  static {
    abortDeadline = (deadline, reason) => deadline.#abort(reason);
    watchDeadline = (deadline, onExpire) => {
      deadline.#onExpire = onExpire;
      if (deadline.#timer === undefined && !deadline.#disposed && !deadline.#controller?.signal.aborted)
        deadline.#arm();
    };
  }

  private constructor(limitMs: number, clock: Clock) {
    this.limitMs = limitMs;
    this.clock = clock;
  }

  /**
   * A deadline at the absolute instant `epochMs`.
   * @throws {@link InvalidOptionError} when `epochMs` is not a finite number >= 0.
   * @example Deadline.at(Date.now() + 1900)
   */
  static at(epochMs: number, clock: Clock = systemClock): Deadline {
    if (typeof epochMs !== 'number' || !Number.isFinite(epochMs) || epochMs < 0)
      throw new InvalidOptionError('epochMs', 'a finite epoch-ms number >= 0', epochMs);
    return new Deadline(epochMs, checkClock(clock));
  }

  /**
   * A deadline `ms` milliseconds from the clock's now.
   * @throws {@link InvalidOptionError} when `ms` is not a finite number >= 0.
   * @example Deadline.after(1900)
   */
  static after(ms: number, clock: Clock = systemClock): Deadline {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new InvalidOptionError('ms', 'a finite number of milliseconds >= 0', ms);
    const checked = checkClock(clock);
    return new Deadline(checked.now() + ms, checked);
  }

  /**
   * The deadline of an incoming request: `x-deadline-epoch-ms` (or `grpc-timeout`), capped at
   * now + `maxMs`, or now + `defaultMs` when missing or malformed. Never throws on header content;
   * see {@link parseDeadlineHeader} for the exact rules.
   * @throws {@link InvalidOptionError} when an option is unusable.
   * @example Deadline.fromHeaders(req.headers, { defaultMs: 1000, maxMs: 5000 })
   */
  static fromHeaders(headers: DeadlineHeadersInput, options: DeadlineFromHeadersOptions): Deadline {
    return readIncomingDeadline(headers, options).deadline;
  }

  /** Milliseconds left until the limit, never below 0. */
  remainingMs(): number {
    const left = this.limitMs - this.clock.now();
    return Math.max(left, 0);
  }

  /** True once the clock has reached the limit. */
  expired(): boolean {
    return this.clock.now() >= this.limitMs;
  }

  /**
   * A signal that aborts with a {@link DeadlineExceededError} when the limit is reached.
   *
   * Created on first access (an unused deadline costs no timer). Its timer goes through the
   * deadline's clock and is `unref()`ed, so it never keeps the process alive; it is released when it
   * fires or by {@link Deadline.dispose}. Call `dispose()` when the work finishes well before the
   * limit and you create many deadlines (per request, in a loop): otherwise each timer lingers until
   * the limit.
   */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    if (this.expired()) controller.abort(this.#exceeded());
    else if (!this.#disposed && this.#timer === undefined) this.#arm();
    return controller.signal;
  }

  /** The header that carries this deadline to the next hop (the limit rounded down to whole ms). */
  toHeaders(): { 'x-deadline-epoch-ms': string } {
    return { [DEADLINE_HEADER]: String(Math.floor(this.limitMs)) } as { 'x-deadline-epoch-ms': string };
  }

  /**
   * A child deadline: the earlier of this one and `other` (a deadline, or milliseconds from now).
   * Never later than this deadline — a child can only tighten its parent.
   * @throws {@link InvalidOptionError} when `other` is a number, or a deadline whose `limitMs` is,
   *   that is not finite and >= 0 (a `NaN` limit would otherwise make every comparison false).
   * @example const forSupplier = deadline.tighten(250);
   */
  tighten(other: Deadline | number): Deadline {
    let limitMs: number;
    if (typeof other === 'object' && other !== null && 'limitMs' in other) {
      // Duck-typed so that a Deadline from another copy of prazo (ESM and CJS side by side) works too.
      checkLimitMs('other.limitMs', other.limitMs);
      limitMs = other.limitMs;
    } else {
      if (typeof other !== 'number' || !Number.isFinite(other) || other < 0)
        throw new InvalidOptionError('other', 'a Deadline or a finite number of milliseconds >= 0', other);
      limitMs = this.clock.now() + other;
    }
    return new Deadline(Math.min(this.limitMs, limitMs), this.clock);
  }

  /**
   * Releases the signal's timer. After `dispose()` the signal no longer aborts at the limit (it keeps
   * any abort that already happened). Idempotent; the numbers (`remainingMs`, `expired`) keep working.
   */
  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== undefined) {
      this.clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #arm(): void {
    // Timers may fire a little early against the wall clock, and cannot wait longer than ~24.8 days:
    // on firing, re-check and re-arm for what is left.
    const timer = this.clock.setTimeout(
      () => {
        this.#timer = undefined;
        if (this.#disposed || this.#controller?.signal.aborted) return;
        if (!this.expired()) {
          this.#arm();
          return;
        }
        const error = this.#exceeded();
        const onExpire = this.#onExpire;
        this.#onExpire = undefined;
        onExpire?.(error);
        this.#controller?.abort(error);
      },
      Math.min(this.remainingMs(), MAX_TIMER_MS),
    );
    timer.unref();
    this.#timer = timer;
  }

  #abort(reason: unknown): void {
    const controller = this.#controller ?? new AbortController();
    this.#controller = controller;
    this.dispose();
    if (!controller.signal.aborted) controller.abort(reason);
  }

  #exceeded(): DeadlineExceededError {
    return new DeadlineExceededError(
      `Deadline exceeded: the limit was ${Math.floor(this.limitMs)} (epoch ms).`,
    );
  }
}

/**
 * The deadline of an incoming request, as {@link Deadline.fromHeaders} reads it, and the instant after
 * which the request counts as arrived expired: the skew allowance moves only that instant, never the
 * deadline that the service honours and passes on.
 * @internal Shared with the server adapters.
 */
export function readIncomingDeadline(
  headers: DeadlineHeadersInput,
  options: DeadlineFromHeadersOptions,
): { deadline: Deadline; arrivalLimitMs: number } {
  const normalized = normalizeDeadlineHeaderOptions(options);
  const clock = checkClock(options.clock ?? systemClock);
  return readIncomingDeadlineWith(headers, normalized, clock);
}

/**
 * {@link readIncomingDeadline} with options validated once at setup: what the server adapters call on
 * every request.
 * @internal
 */
export function readIncomingDeadlineWith(
  headers: DeadlineHeadersInput,
  options: NormalizedDeadlineHeaderOptions,
  clock: Clock,
): { deadline: Deadline; arrivalLimitMs: number } {
  const now = clock.now();
  if (!Number.isFinite(now)) throw new InvalidOptionError('nowMs', 'a finite epoch-ms number', now);
  const parsed = parseDeadlineHeaderWith(
    readHeader(headers, DEADLINE_HEADER),
    readHeader(headers, GRPC_TIMEOUT_HEADER),
    now,
    options,
  );
  return { deadline: Deadline.at(parsed.limitMs, clock), arrivalLimitMs: parsed.arrivalLimitMs };
}

/**
 * Aborts the deadline's signal with `reason` and releases its timer (used by the server adapters when
 * the client disconnects: the work is then cancelled, not expired).
 * @internal
 */
export function cancelDeadline(deadline: Deadline, reason: unknown): void {
  abortDeadline(deadline, reason);
}

/**
 * Calls `onExpire` when the deadline's limit is reached, before its signal (if anyone made it)
 * aborts — what an adapter's 504 needs, without an `AbortController` and a listener per request.
 * One watcher per deadline; `dispose()` stops it, a cancellation too.
 * @internal
 */
export function onDeadlineExpired(
  deadline: Deadline,
  onExpire: (error: DeadlineExceededError) => void,
): void {
  watchDeadline(deadline, onExpire);
}

/**
 * Checks a `clock` option: `now`, `setTimeout` and `clearTimeout` functions.
 * @throws {@link InvalidOptionError} naming `clock`.
 * @internal Shared with the server adapters.
 */
export function checkClock(clock: Clock): Clock {
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  )
    throw new InvalidOptionError('clock', 'a Clock ({ now, setTimeout, clearTimeout })', clock);
  return clock;
}

function readHeader(headers: DeadlineHeadersInput, name: string): HeaderValue {
  if (typeof headers !== 'object' || headers === null) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const value = (headers as { get(name: string): string | null }).get(name);
    return typeof value === 'string' ? value : undefined;
  }
  const record = headers as Record<string, unknown>;
  const value = record[name];
  if (typeof value === 'string' || Array.isArray(value)) return value as HeaderValue;
  return undefined;
}
