import type { Criticality } from '../wire/criticality-header.js';
import { CodelState } from './codel.js';

/** What the queue needs to know of a waiting request. */
export interface Waiting {
  readonly criticality: Criticality;
  /** When it entered the queue, in epoch ms. */
  readonly enqueuedAt: number;
}

const ORDER: readonly Criticality[] = ['critical', 'default', 'sheddable'];

/**
 * The admission queue: one lane per criticality, served most critical first; within a lane first in,
 * first out while the queue is calm, and **last in, first out** while CoDel finds it overloaded (the
 * newest request has the most time left; the oldest are dropped). CoDel sees, at every departure,
 * the wait of the oldest request still queued. Pure: every call takes the time.
 *
 * @see {@link CodelState} for the overload signal.
 */
export class AdmissionQueue<T extends Waiting> {
  readonly codel: CodelState;
  readonly #lanes: [T[], T[], T[]] = [[], [], []];
  #length = 0;

  constructor(targetMs: number, intervalMs: number) {
    this.codel = new CodelState(targetMs, intervalMs);
  }

  /** Requests waiting. */
  get length(): number {
    return this.#length;
  }

  /** Whether CoDel finds the queue overloaded (serving LIFO, dropping long waits). */
  get overloaded(): boolean {
    return this.codel.overloaded;
  }

  /** The least critical level waiting, or undefined when the queue is empty. */
  leastWaiting(): Criticality | undefined {
    for (let lane = 2; lane >= 0; lane--) if (this.#lanes[lane]!.length > 0) return ORDER[lane];
    return undefined;
  }

  /** Lets CoDel see the time pass (call before deciding on an arrival). */
  advance(nowMs: number): void {
    this.codel.advance(nowMs, this.#length);
  }

  /** Records a request that ran without waiting: a zero sojourn for CoDel. */
  bypassed(): void {
    this.codel.observe(0);
  }

  /**
   * Adds `entry`. When the queue already holds `maxQueue` requests, the newest of the least critical
   * ones leaves to make room and is returned (the caller decided that `entry` is more critical).
   */
  push(entry: T, maxQueue: number): T | undefined {
    let evicted: T | undefined;
    if (this.#length >= maxQueue) {
      for (let lane = 2; lane >= 0 && evicted === undefined; lane--) evicted = this.#lanes[lane]!.pop();
      if (evicted !== undefined) this.#length--;
    }
    this.#lanes[ORDER.indexOf(entry.criticality)]!.push(entry);
    this.#length++;
    return evicted;
  }

  /** Takes `entry` out (its deadline passed, or its client left). Returns whether it was waiting. */
  remove(entry: T): boolean {
    const lane = this.#lanes[ORDER.indexOf(entry.criticality)]!;
    const at = lane.indexOf(entry);
    if (at === -1) return false;
    lane.splice(at, 1);
    this.#length--;
    return true;
  }

  /**
   * The next request to run, or undefined when none waits. While overloaded, every request that has
   * waited longer than the CoDel target is dropped first and appended to `dropped`.
   */
  take(nowMs: number, dropped: T[]): T | undefined {
    this.codel.advance(nowMs, this.#length);
    let oldest = Number.POSITIVE_INFINITY;
    for (const lane of this.#lanes)
      if (lane.length > 0 && lane[0]!.enqueuedAt < oldest) oldest = lane[0]!.enqueuedAt;
    this.codel.observe(oldest === Number.POSITIVE_INFINITY ? 0 : nowMs - oldest);
    const overloaded = this.codel.overloaded;
    if (overloaded) {
      for (const lane of this.#lanes) {
        let n = 0;
        while (n < lane.length && this.codel.shouldDrop(nowMs - lane[n]!.enqueuedAt)) n++;
        if (n > 0) {
          for (const entry of lane.splice(0, n)) dropped.push(entry);
          this.#length -= n;
        }
      }
    }
    for (const lane of this.#lanes) {
      if (lane.length === 0) continue;
      const entry = (overloaded ? lane.pop() : lane.shift())!;
      this.#length--;
      return entry;
    }
    return undefined;
  }
}
