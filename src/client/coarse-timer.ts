import type { Clock, Timer } from '../clock.js';

/** Something the {@link CoarseTimer} calls back once its `dueAt` has passed. */
export interface TimerEntry {
  /** Epoch ms at or after which {@link TimerEntry.onDue} runs. */
  dueAt: number;
  /** Called once, on the first tick at or after `dueAt`; the entry is already removed. */
  onDue(nowMs: number): void;
  /** Called when the dependency closes while the entry is pending: what it guards ends with `error`. */
  onClose?(error: Error): void;
}

/**
 * Tick of the shared timer, in ms: the precision of per-attempt timeouts and hedge delays.
 * undici's own request timeouts tick every ~500 ms, far too coarse for a 250 ms read timeout.
 */
export const COARSE_TICK_MS = 5;

/**
 * One timer shared by every in-flight attempt of a dependency, instead of one timer (and one
 * closure) per request: entries join and leave a set (tens of ns each), and a single unref'd timer
 * sweeps the set every {@link COARSE_TICK_MS} while it is not empty.
 *
 * Leaving the set never touches the timer: arming and clearing a Node timer costs microseconds
 * (timer lists, a call into libuv), and at high concurrency the set empties and refills many times
 * a tick. Instead the tick that finds the set empty does not re-arm, so an idle dependency holds no
 * timer at most one tick after its last attempt ended.
 */
export class CoarseTimer {
  readonly #clock: Clock;
  readonly #tickMs: number;
  readonly #entries = new Set<TimerEntry>();
  #timer: Timer | undefined = undefined;
  #armed = false;
  readonly #tick = (): void => {
    this.#armed = false;
    const entries = this.#entries;
    if (entries.size !== 0) {
      const now = this.#clock.now();
      for (const entry of entries) {
        if (entry.dueAt <= now) {
          entries.delete(entry);
          entry.onDue(now);
        }
      }
    }
    if (entries.size !== 0 && !this.#armed) this.#arm();
    else if (!this.#armed) this.#timer = undefined;
  };

  constructor(clock: Clock, tickMs: number = COARSE_TICK_MS) {
    this.#clock = clock;
    this.#tickMs = tickMs;
  }

  /** Number of entries waiting. */
  get size(): number {
    return this.#entries.size;
  }

  /** Adds (or keeps) `entry`; it fires on the first tick at or after its `dueAt`. */
  add(entry: TimerEntry): void {
    this.#entries.add(entry);
    if (!this.#armed) this.#arm();
  }

  /** Removes `entry` if present (the timer stops on its next tick if nothing is left). */
  delete(entry: TimerEntry): void {
    this.#entries.delete(entry);
  }

  /** The entries waiting, for `close()` to cancel them. */
  entries(): TimerEntry[] {
    return [...this.#entries];
  }

  /** Drops every entry without calling it and disarms the timer now. */
  clear(): void {
    this.#entries.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armed = false;
  }

  #arm(): void {
    this.#armed = true;
    // Node's timers can be re-armed in place (no new Timeout object); a fake clock's cannot.
    const timer = this.#timer as (Timer & { refresh?: () => unknown }) | undefined;
    if (timer?.refresh !== undefined) {
      timer.refresh();
      return;
    }
    this.#timer = this.#clock.setTimeout(this.#tick, this.#tickMs);
    this.#timer.unref();
  }
}
