/**
 * How long an instance whose connect failed is passed over by every request of the dependency, in
 * ms (while another instance is available). Long enough to stop a burst from knocking on a dead
 * door, short enough to notice the instance is back.
 */
export const INSTANCE_DOWN_MS = 1_000;

/**
 * Chooses the instance (origin) of each attempt: round-robin, skipping an instance whose connect
 * failed in the last {@link INSTANCE_DOWN_MS} and the instance the request asks to avoid (the one
 * that just failed it, or the one the first copy of a hedge went to) — as long as another exists.
 * With every instance down it still answers (the least recently failed), since the deadline, not the
 * picker, decides when to stop.
 */
export class InstancePicker {
  readonly count: number;
  readonly #downUntil: Float64Array;
  readonly #downMs: number;
  #next = 0;
  #anyDown = false;

  constructor(count: number, downMs: number = INSTANCE_DOWN_MS) {
    this.count = count;
    this.#downUntil = new Float64Array(count);
    this.#downMs = downMs;
  }

  /**
   * The instance for the next attempt. `avoid` is an instance index to pass over when another is
   * available, or -1.
   */
  pick(avoid: number, nowMs: number): number {
    const n = this.count;
    if (n === 1) return 0;
    const start = this.#next;
    let fallback = -1;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (i === avoid) continue;
      if (this.#anyDown && this.#downUntil[i]! > nowMs) {
        if (fallback === -1 || this.#downUntil[i]! < this.#downUntil[fallback]!) fallback = i;
        continue;
      }
      this.#next = (i + 1) % n;
      return i;
    }
    // Every other instance is down (or avoided): the least recently failed one, else the avoided one.
    const chosen = fallback !== -1 ? fallback : avoid >= 0 ? avoid : start;
    this.#next = (chosen + 1) % n;
    return chosen;
  }

  /**
   * The instance for a hedge copy: another instance that is up, the next in round-robin order; -1
   * when there is none (a single instance, or every other one down): a copy sent to the instance
   * that is slow now would wait behind the same pause and only spend budget.
   */
  pickHedge(first: number, nowMs: number): number {
    const n = this.count;
    for (let k = 0; k < n; k++) {
      const i = (this.#next + k) % n;
      if (i === first || (this.#anyDown && this.#downUntil[i]! > nowMs)) continue;
      this.#next = (i + 1) % n;
      return i;
    }
    return -1;
  }

  /** Records that connecting to instance `i` failed at `nowMs`. */
  markDown(i: number, nowMs: number): void {
    if (i < 0 || i >= this.count) return;
    this.#downUntil[i] = nowMs + this.#downMs;
    this.#anyDown = true;
  }

  /** Records that instance `i` answered: it is up again. */
  markUp(i: number): void {
    if (!this.#anyDown || this.#downUntil[i] === 0) return;
    this.#downUntil[i] = 0;
    this.#anyDown = this.#downUntil.some((t) => t !== 0);
  }
}
