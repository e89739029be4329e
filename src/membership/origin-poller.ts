import type { Clock, Timer } from '../clock.js';
import { ResolverError } from '../errors.js';
import { diffOrigins, type OriginsDiff } from './diff-origins.js';
import { parseOriginList } from './origin-list.js';
import type { OriginResolver, OriginsAnswer } from './origin-resolver.js';
import { failureRetryMs } from './refresh-delay.js';

/** Options of {@link createOriginPoller}. */
export interface OriginPollerOptions {
  resolve: OriginResolver;
  clock: Clock;
  /** Time between two resolutions when the answer names none, in ms. */
  refreshMs: number;
  /** Longest a resolution may take before it counts as failed, in ms. */
  timeoutMs: number;
  /** A new set was accepted (the first one included, with every origin in `added`). */
  onChange(origins: readonly string[], diff: OriginsDiff): void;
  /** A resolution failed; `kept` is the last good set (empty before the first). */
  onError(error: ResolverError, kept: readonly string[], consecutiveFailures: number): void;
}

/** Polls an {@link OriginResolver}, keeping the last good set. */
export interface OriginPoller {
  /** The last good set (empty before the first resolution). */
  readonly origins: readonly string[];
  /** Whether a first set has been accepted. */
  readonly ready: boolean;
  /** The error of the last failed resolution, until one succeeds. */
  readonly lastError: ResolverError | undefined;
  /** Resolves when the first set is accepted, or when the poller is closed. */
  whenReady(): Promise<void>;
  /** Stops polling; an answer still on its way is ignored. */
  close(): void;
}

/**
 * Starts polling `resolve` at once, then every `refreshMs` (or the answer's own `refreshMs`). A
 * resolver that throws, rejects, takes longer than `timeoutMs`, or answers an empty or malformed
 * list leaves the set as it was and is reported through `onError`; it is asked again after 0.5 s,
 * 1 s, 2 s … (at most `refreshMs`). One resolution at a time; the timer is unref'd.
 */
export function createOriginPoller(options: OriginPollerOptions): OriginPoller {
  const { clock, resolve } = options;
  let origins: readonly string[] = [];
  let ready = false;
  let closed = false;
  let failures = 0;
  let lastError: ResolverError | undefined;
  let timer: Timer | undefined;
  let readyPromise: Promise<void> | undefined;
  let markReady: (() => void) | undefined;

  const schedule = (delayMs: number): void => {
    timer = clock.setTimeout(run, delayMs);
    timer.unref();
  };

  const accept = (answer: OriginsAnswer): number => {
    const list = Array.isArray(answer) ? answer : (answer as { origins?: unknown }).origins;
    const next = parseOriginList(list);
    const diff = diffOrigins(origins, next);
    const first = !ready;
    if (first || diff.added.length !== 0 || diff.removed.length !== 0) {
      origins = next;
      ready = true;
      options.onChange(next, diff);
      if (first) markReady?.();
    }
    const refreshMs = Array.isArray(answer) ? undefined : (answer as { refreshMs?: unknown }).refreshMs;
    return typeof refreshMs === 'number' && refreshMs > 0 && Number.isFinite(refreshMs)
      ? refreshMs
      : options.refreshMs;
  };

  const fail = (cause: unknown): void => {
    failures++;
    lastError =
      cause instanceof ResolverError
        ? cause
        : new ResolverError(
            `The resolver of origins failed: ${cause instanceof Error ? cause.message : String(cause)}`,
            {
              cause,
            },
          );
    options.onError(lastError, origins, failures);
    schedule(failureRetryMs(failures, options.refreshMs));
  };

  function run(): void {
    timer = undefined;
    if (closed) return;
    let answer: OriginsAnswer | Promise<OriginsAnswer>;
    try {
      answer = resolve();
    } catch (error) {
      fail(error);
      return;
    }
    if (!isPromiseLike(answer)) {
      settle(answer);
      return;
    }
    let done = false;
    const timeout = clock.setTimeout(() => {
      if (done) return;
      done = true;
      if (!closed)
        fail(new ResolverError(`The resolver of origins did not answer within ${options.timeoutMs} ms.`));
    }, options.timeoutMs);
    timeout.unref();
    answer.then(
      (value) => {
        if (done) return;
        done = true;
        clock.clearTimeout(timeout);
        if (!closed) settle(value);
      },
      (error: unknown) => {
        if (done) return;
        done = true;
        clock.clearTimeout(timeout);
        if (!closed) fail(error);
      },
    );
  }

  function settle(answer: OriginsAnswer): void {
    let delayMs: number;
    try {
      delayMs = accept(answer);
    } catch (error) {
      fail(error);
      return;
    }
    failures = 0;
    lastError = undefined;
    schedule(delayMs);
  }

  run();

  return {
    get origins() {
      return origins;
    },
    get ready() {
      return ready;
    },
    get lastError() {
      return lastError;
    },
    whenReady() {
      if (ready || closed) return Promise.resolve();
      readyPromise ??= new Promise<void>((done) => {
        markReady = done;
      });
      return readyPromise;
    },
    close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      resolve.cancel?.();
      markReady?.();
    },
  };
}

function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
