import type { Clock, Timer } from '../clock.js';

/** Something the {@link CoarseTimer} calls back once its `dueAt` has passed. */
export interface TimerEntry {
  /** Epoch ms at or after which {@link TimerEntry.onDue} runs. */
  dueAt: number;
  /** Called once, on the first tick at or after `dueAt`; the entry is already removed. */
  onDue(nowMs: number): void;
  /** Called when the dependency closes while the entry is pending: what it guards ends with `error`. */
  onClose?(error: Error): void;
  /**
   * The entry's place in the timer, kept by the {@link CoarseTimer} (-1 when not waiting). Declare it
   * `timerSlot = -1` in a class so that every instance has the same shape.
   */
  timerSlot?: number;
}

/**
 * Tick of the shared timer, in ms: the precision of per-attempt timeouts and hedge delays.
 * undici's own request timeouts tick every ~500 ms, far too coarse for a 250 ms read timeout.
 */
export const COARSE_TICK_MS = 5;

/**
 * One timer shared by every in-flight attempt of a dependency, instead of one timer (and one
 * closure) per request: entries join and leave a dense array (a few ns each: an entry knows its slot,
 * leaving moves the last entry into it), and a single unref'd timer sweeps the array every
 * {@link COARSE_TICK_MS} while it is not empty.
 *
 * Not a `Set`: a set that fills and empties thousands of times a second is rehashed again and again,
 * and its discarded tables, once promoted, keep later entries reachable for the young-generation
 * collector — every finished call's objects survived into the old generation (2 MB per scavenge at
 * 32 calls in flight, measured with `--trace-gc-nvp`). A slot overwritten on leaving holds nothing.
 *
 * Leaving the array never touches the timer: arming and clearing a Node timer costs microseconds
 * (timer lists, a call into libuv), and at high concurrency the array empties and refills many times
 * a tick. Instead the tick that finds the array empty does not re-arm, so an idle dependency holds no
 * timer at most one tick after its last attempt ended.
 */
export class CoarseTimer {
  readonly #clock: Clock;
  readonly #tickMs: number;
  /** Waiting entries in `[0, #size)`; the slots above hold `undefined`. */
  readonly #items: Array<TimerEntry | undefined> = [];
  #size = 0;
  #timer: Timer | undefined = undefined;
  #armed = false;
  readonly #tick = (): void => {
    this.#armed = false;
    if (this.#size !== 0) {
      const now = this.#clock.now();
      const items = this.#items;
      // Downwards: leaving moves the last entry (already seen, or added by a callback) into the
      // freed slot; a callback that removes others can only shrink what is left to see.
      for (let i = this.#size - 1; i >= 0; i = Math.min(i - 1, this.#size - 1)) {
        const entry = items[i]!;
        if (entry.dueAt <= now) {
          this.delete(entry);
          entry.onDue(now);
        }
      }
    }
    if (this.#size !== 0 && !this.#armed) this.#arm();
    else if (!this.#armed) this.#timer = undefined;
  };

  constructor(clock: Clock, tickMs: number = COARSE_TICK_MS) {
    this.#clock = clock;
    this.#tickMs = tickMs;
  }

  /** Number of entries waiting. */
  get size(): number {
    return this.#size;
  }

  /** Adds (or keeps) `entry`; it fires on the first tick at or after its `dueAt`. */
  add(entry: TimerEntry): void {
    const slot = entry.timerSlot;
    if (slot !== undefined && slot >= 0 && this.#items[slot] === entry) return;
    entry.timerSlot = this.#size;
    this.#items[this.#size++] = entry;
    if (!this.#armed) this.#arm();
  }

  /** Removes `entry` if present (the timer stops on its next tick if nothing is left). */
  delete(entry: TimerEntry): void {
    const slot = entry.timerSlot;
    const items = this.#items;
    if (slot === undefined || slot < 0 || items[slot] !== entry) return;
    const last = --this.#size;
    if (slot !== last) {
      const moved = items[last]!;
      items[slot] = moved;
      moved.timerSlot = slot;
    }
    items[last] = undefined;
    entry.timerSlot = -1;
  }

  /** The entries waiting, for `close()` to cancel them. */
  entries(): TimerEntry[] {
    return this.#items.slice(0, this.#size) as TimerEntry[];
  }

  /** Drops every entry without calling it and disarms the timer now. */
  clear(): void {
    for (let i = 0; i < this.#size; i++) this.#items[i]!.timerSlot = -1;
    this.#items.length = 0;
    this.#size = 0;
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
