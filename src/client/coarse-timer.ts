import type { Clock, Timer } from '../clock.js';

/** Something the {@link CoarseTimer} calls back once its `dueAt` has passed. */
export interface TimerEntry {
  /** Epoch ms at or after which {@link TimerEntry.onDue} runs. */
  dueAt: number;
  /** Called once, on the first tick at or after `dueAt`; the entry is already removed. */
  onDue(nowMs: number): void;
}

/**
 * Tick of the shared timer, in ms: the precision of per-attempt timeouts and hedge delays.
 * undici's own request timeouts tick every ~500 ms, far too coarse for a 250 ms read timeout.
 */
export const COARSE_TICK_MS = 5;

/**
 * One timer shared by every in-flight attempt of a dependency, instead of one timer (and one
 * closure) per request: entries join and leave a set (tens of ns each), and a single unref'd timer
 * sweeps the set every {@link COARSE_TICK_MS} while it is not empty. The timer is disarmed as soon
 * as the set empties, so an idle dependency holds no timer at all.
 */
export class CoarseTimer {
  readonly #clock: Clock;
  readonly #tickMs: number;
  readonly #entries = new Set<TimerEntry>();
  #timer: Timer | undefined = undefined;
  readonly #tick = (): void => {
    this.#timer = undefined;
    const now = this.#clock.now();
    for (const entry of this.#entries) {
      if (entry.dueAt <= now) {
        this.#entries.delete(entry);
        entry.onDue(now);
      }
    }
    if (this.#entries.size !== 0 && this.#timer === undefined) this.#arm();
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
    if (this.#timer === undefined) this.#arm();
  }

  /** Removes `entry` if present. Disarms the timer when nothing is left. */
  delete(entry: TimerEntry): void {
    this.#entries.delete(entry);
    if (this.#entries.size === 0 && this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** The entries waiting, for `close()` to cancel them. */
  entries(): TimerEntry[] {
    return [...this.#entries];
  }

  /** Drops every entry without calling it and disarms the timer. */
  clear(): void {
    this.#entries.clear();
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #arm(): void {
    this.#timer = this.#clock.setTimeout(this.#tick, this.#tickMs);
    this.#timer.unref();
  }
}
