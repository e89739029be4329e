/**
 * A timer handle returned by {@link Clock.setTimeout}. Opaque to callers: pass it back to
 * {@link Clock.clearTimeout}.
 */
export interface Timer {
  /** Lets the process exit while the timer is pending (a no-op on fake clocks). */
  unref(): unknown;
}

/**
 * The source of time for every time-dependent piece of prazo.
 *
 * Every component takes one so that tests can drive time by hand instead of sleeping
 * (see {@link systemClock} for the real one).
 */
export interface Clock {
  /** Current wall-clock time in epoch milliseconds (deadlines travel between hosts in this unit). */
  now(): number;
  /** Schedules `callback` after `delayMs` milliseconds. */
  setTimeout(callback: () => void, delayMs: number): Timer;
  /** Cancels a timer created by {@link Clock.setTimeout}; unknown or fired timers are ignored. */
  clearTimeout(timer: Timer): void;
}

/** The real clock: `Date.now()` and Node's timers. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (callback: () => void, delayMs: number): Timer => setTimeout(callback, delayMs),
  clearTimeout: (timer: Timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
});
