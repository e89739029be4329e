/**
 * The CoDel overload detector of the admission queue, as pure state driven by the caller's clock
 * readings: no timer, no I/O.
 *
 * Time is cut into intervals of `intervalMs`. Over each interval it keeps the **minimum sojourn
 * time** seen when a request leaves the queue: the wait of the oldest request still queued at that
 * moment (what a first-in, first-out queue would hand over — kept as the signal when the queue
 * serves the newest first, which would otherwise hide a standing queue behind short waits); a
 * request that never waited counts 0, and so does a queue found empty. When an interval ends with
 * that minimum above `targetMs` — the queue never drained below the target for a whole interval:
 * a standing queue, not a burst — the queue is *overloaded* until an interval ends with the minimum
 * at or below the target again. An interval in which nothing left a non-empty queue counts as
 * overloaded (nothing moved).
 *
 * While overloaded the admission serves the newest waiting request first (adaptive LIFO) and drops
 * every waiting request whose sojourn exceeds `targetMs`.
 *
 * @see Nichols & Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012 (the minimum sojourn over
 *   an interval as the signal of a standing queue).
 * @see Maurer, "Fail at Scale", ACM Queue 13(8), 2015 (CoDel for server request queues, 5 ms target,
 *   100 ms interval, adaptive LIFO).
 */
export class CodelState {
  /** Sojourn time a standing queue may keep, in ms. */
  readonly targetMs: number;
  /** Length of one observation interval, in ms. */
  readonly intervalMs: number;
  #minSojournMs = Number.POSITIVE_INFINITY;
  #intervalEndsAt: number | undefined;
  #overloaded = false;

  constructor(targetMs: number, intervalMs: number) {
    this.targetMs = targetMs;
    this.intervalMs = intervalMs;
  }

  /** Whether the last finished interval kept a standing queue above the target. */
  get overloaded(): boolean {
    return this.#overloaded;
  }

  /**
   * Closes the current interval if it has ended by `nowMs`. `queueLength` is the length the queue
   * has had since the previous call (it only changes through calls that come here first).
   * @returns true when the overloaded state changed.
   */
  advance(nowMs: number, queueLength: number): boolean {
    if (this.#intervalEndsAt === undefined) {
      this.#intervalEndsAt = nowMs + this.intervalMs;
      return false;
    }
    if (nowMs < this.#intervalEndsAt) return false;
    // The queue has kept `queueLength` since the last event, so an empty one was empty at the end.
    const min = queueLength === 0 ? 0 : this.#minSojournMs;
    const before = this.#overloaded;
    this.#overloaded = min > this.targetMs;
    this.#minSojournMs = Number.POSITIVE_INFINITY;
    this.#intervalEndsAt = nowMs + this.intervalMs;
    return before !== this.#overloaded;
  }

  /** Records the sojourn time seen as a request leaves the queue (0 for one that did not wait). */
  observe(sojournMs: number): void {
    if (sojournMs < this.#minSojournMs) this.#minSojournMs = sojournMs;
  }

  /** Whether a request that has waited `sojournMs` should be dropped now. */
  shouldDrop(sojournMs: number): boolean {
    return this.#overloaded && sojournMs > this.targetMs;
  }
}
