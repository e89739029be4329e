import type { Clock, Timer } from './clock.js';

/** Something the {@link CoarseTimer} calls back once its `dueAt` has passed. */
export interface TimerEntry {
  /** Epoch ms at or after which {@link TimerEntry.onDue} runs. */
  dueAt: number;
  /** Called once, on the first tick at or after `dueAt`; the entry is already removed. */
  onDue(nowMs: number): void;
  /** Called when the dependency closes while the entry is pending: what it guards ends with `error`. */
  onClose?(error: Error): void;
  /**
   * The timer's links while the entry waits (null otherwise): its own, not the entry's to touch. A
   * class implementing this interface declares both, initialised to null, to keep one shape.
   */
  timerPrev?: TimerEntry | null;
  timerNext?: TimerEntry | null;
}

/**
 * Tick of the shared timer, in ms: the precision of per-attempt timeouts and hedge delays.
 * undici's own request timeouts tick every ~500 ms, far too coarse for a 250 ms read timeout.
 */
export const COARSE_TICK_MS = 5;

/** Turns in a row a sweep is put off past a stall of the loop (see {@link CoarseTimer}). */
const MAX_PUT_OFFS = 3;

/**
 * One timer shared by every in-flight attempt of a dependency, instead of one timer (and one
 * closure) per request: entries join and leave a set (tens of ns each), and a single unref'd timer
 * sweeps the set every {@link COARSE_TICK_MS} while it is not empty.
 *
 * Leaving the set never touches the timer: arming and clearing a Node timer costs microseconds
 * (timer lists, a call into libuv), and at high concurrency the set empties and refills many times
 * a tick. Instead the tick that finds the set empty does not re-arm, so an idle dependency holds no
 * timer at most one tick after its last attempt ended.
 *
 * The entries form a list threaded through the entries themselves (`timerPrev`/`timerNext`), in
 * the order they joined, rather than a `Set`: a `Set` churned by every attempt rehashes its table
 * every few additions, and V8 links each outgrown table to its successor and leaves the entries in
 * it. Once one table has reached the old generation, that chain keeps every attempt of every table
 * since alive through young-generation collections, and promotes it (≈ 550 bytes a call, 13 % of
 * the young generation surviving each scavenge at 8 or more calls in flight).
 *
 * **An answer that has arrived beats a timer that is due.** On the real clock the tick only
 * schedules the sweep (`afterIo`: `setImmediate`), which then runs in the same turn of the event
 * loop after its I/O. A process whose own event loop was blocked past an attempt's read timeout
 * (its CPU busy, a long collection) comes back to the timers first: swept there, the timeout would
 * abandon an answer that is already on the socket, and a retry would ask the dependency for the same
 * work again. Swept after the I/O, the answer is read and the attempt's entry has left the list. The
 * dependency's slowness is judged, not the caller's own stall. When the stall falls between the
 * tick and its sweep (a callback of that turn's I/O ran long), nothing was read since: the sweep is
 * put off past the next turn's I/O, and again while the turns keep stalling, three times in a row
 * at most. A fake clock sweeps in the tick.
 */
export class CoarseTimer {
  readonly #clock: Clock;
  readonly #tickMs: number;
  #head: TimerEntry | null = null;
  #tail: TimerEntry | null = null;
  #size = 0;
  /** The entry the tick visits next (moved on when that entry leaves while another one fires). */
  #cursor: TimerEntry | null = null;
  #timer: Timer | undefined = undefined;
  #armed = false;
  /** Runs the sweep after the I/O of the loop's turn (`setImmediate`), or undefined: in the tick. */
  readonly #afterIo: ((sweep: () => void) => unknown) | undefined;
  /** When the sweep was scheduled (by the tick, or by its last put-off), and how often it was put off since the tick. */
  #scheduledAt = 0;
  #putOffs = 0;
  readonly #tick = (): void => {
    this.#armed = false;
    if (this.#afterIo !== undefined && this.#size !== 0) {
      this.#scheduledAt = this.#clock.now();
      this.#putOffs = 0;
      this.#afterIo(this.#sweep);
    } else this.#sweep();
  };
  /**
   * Calls every entry that is due, then re-arms while entries wait. An entry added between the tick
   * and its sweep armed the timer itself (`add`).
   */
  readonly #sweep = (): void => {
    if (this.#size !== 0) {
      const now = this.#clock.now();
      // The loop stalled since the sweep was scheduled (a callback of the same turn ran long): no
      // I/O was read since, and an answer that came meanwhile waits on its socket. Put the sweep
      // off, past the next turn's I/O — and again if that turn stalled too, a few times in a row at
      // most ({@link MAX_PUT_OFFS}), or a loop that stalls every turn would never time anything out.
      // Once only was not enough: on a busy machine a first gap of a few ms took the one put-off,
      // and the long stall of the next turn then timed out an attempt whose answer was on its socket.
      if (
        this.#afterIo !== undefined &&
        this.#putOffs < MAX_PUT_OFFS &&
        now - this.#scheduledAt > this.#tickMs
      ) {
        this.#putOffs++;
        this.#scheduledAt = now;
        this.#afterIo(this.#sweep);
        return;
      }
      let entry = this.#head;
      while (entry !== null) {
        this.#cursor = entry.timerNext ?? null;
        if (entry.dueAt <= now) {
          this.#unlink(entry);
          entry.onDue(now);
        }
        entry = this.#cursor;
      }
      this.#cursor = null;
    }
    if (this.#size !== 0 && !this.#armed) this.#arm();
    else if (!this.#armed) this.#timer = undefined;
  };

  /**
   * @param afterIo schedules the sweep after the event loop's I/O (`setImmediate`; see the class's
   *   comment), or undefined to sweep in the tick (a fake clock, which has no loop).
   */
  constructor(clock: Clock, tickMs: number = COARSE_TICK_MS, afterIo?: (sweep: () => void) => unknown) {
    this.#clock = clock;
    this.#tickMs = tickMs;
    this.#afterIo = afterIo;
  }

  /** Number of entries waiting. */
  get size(): number {
    return this.#size;
  }

  /** Adds (or keeps) `entry`; it fires on the first tick at or after its `dueAt`. */
  add(entry: TimerEntry): void {
    if (!this.#has(entry)) {
      const tail = this.#tail;
      entry.timerPrev = tail;
      entry.timerNext = null;
      if (tail === null) this.#head = entry;
      else tail.timerNext = entry;
      this.#tail = entry;
      this.#size++;
    }
    if (!this.#armed) this.#arm();
  }

  /** Removes `entry` if present (the timer stops on its next tick if nothing is left). */
  delete(entry: TimerEntry): void {
    if (this.#has(entry)) this.#unlink(entry);
  }

  /** The entries waiting, for `close()` to cancel them. */
  entries(): TimerEntry[] {
    const list: TimerEntry[] = [];
    for (let entry = this.#head; entry !== null; entry = entry.timerNext ?? null) list.push(entry);
    return list;
  }

  /** Drops every entry without calling it and disarms the timer now. */
  clear(): void {
    for (const entry of this.entries()) {
      entry.timerPrev = null;
      entry.timerNext = null;
    }
    this.#head = null;
    this.#tail = null;
    this.#cursor = null;
    this.#size = 0;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armed = false;
  }

  #has(entry: TimerEntry): boolean {
    return (entry.timerPrev ?? null) !== null || this.#head === entry;
  }

  /** Takes a waiting `entry` out of the list; its links end null, holding nothing alive. */
  #unlink(entry: TimerEntry): void {
    const prev = entry.timerPrev ?? null;
    const next = entry.timerNext ?? null;
    if (this.#cursor === entry) this.#cursor = next;
    if (prev === null) this.#head = next;
    else prev.timerNext = next;
    if (next === null) this.#tail = prev;
    else next.timerPrev = prev;
    entry.timerPrev = null;
    entry.timerNext = null;
    this.#size--;
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
