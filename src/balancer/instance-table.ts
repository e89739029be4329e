import { IndexSet } from './index-set.js';
import { FLOOR_SAMPLES } from './latency-floor.js';

/** Successes in a row are counted up to this (only "at least `consecutiveFailures`" is ever asked). */
export const CLEAN_RUN_CAP = 1 << 30;

/** State of one slot of the {@link InstanceTable}. */
export const SLOT = Object.freeze({ free: 0, up: 1, down: 2, ejected: 3, probing: 4, draining: 5 });

/**
 * The per-instance state of the balancer, one entry per slot in preallocated typed arrays: reading
 * and updating an instance allocates no object. Slots are reused after an instance is removed and
 * drained; the arrays double when the fleet outgrows them (a membership change, never a call).
 */
export class InstanceTable {
  capacity = 0;
  /** Slots ever handed out; every used slot is below it. */
  highWater = 0;
  origins: (string | undefined)[] = [];
  /** One of {@link SLOT}. */
  state = new Uint8Array(0);
  inFlight = new Int32Array(0);
  /** 1 once the peak-EWMA has a sample. */
  sampled = new Uint8Array(0);
  ewmaMs = new Float64Array(0);
  ewmaAt = new Float64Array(0);
  /** The latency floor (latency-floor.ts), valid once `floorCount` is above 0, and its answers. */
  floorMs = new Float64Array(0);
  floorCount = new Int32Array(0);
  floorRing = new Float64Array(0);
  consecutive = new Int32Array(0);
  /** Successes in a row (any failure resets it); {@link CLEAN_RUN_CAP} with no failure on record. */
  cleanRun = new Int32Array(0);
  /** Recent outcomes (see outcome-ring.ts) and how many of them count. */
  ring = new Int32Array(0);
  ringCount = new Int32Array(0);
  lastOutcomeAt = new Float64Array(0);
  lastFailureAt = new Float64Array(0);
  timesEjected = new Int32Array(0);
  /** End of the current ejection or connect-down period. */
  until = new Float64Array(0);
  returnedAt = new Float64Array(0);
  /** 1 while in slow start, since `slowSince`. */
  slow = new Uint8Array(0);
  slowSince = new Float64Array(0);
  probeInFlight = new Uint8Array(0);
  /** Picks in the current and in the previous share window. */
  picksNow = new Float64Array(0);
  picksBefore = new Float64Array(0);

  /** Instances in state up. */
  readonly up = new IndexSet(0);
  /** Instances that are members (every state but free and draining). */
  readonly members = new IndexSet(0);
  readonly byOrigin = new Map<string, number>();
  readonly #freeSlots: number[] = [];

  /** A free slot for `origin`, every field zeroed and the state set to up (not yet in the sets). */
  allocate(origin: string): number {
    const slot = this.#freeSlots.pop() ?? this.highWater++;
    if (slot >= this.capacity) this.#grow(Math.max(4, this.capacity * 2));
    this.origins[slot] = origin;
    this.byOrigin.set(origin, slot);
    this.state[slot] = SLOT.up;
    this.inFlight[slot] = 0;
    this.sampled[slot] = 0;
    this.ewmaMs[slot] = 0;
    this.ewmaAt[slot] = 0;
    this.floorMs[slot] = 0;
    this.floorCount[slot] = 0;
    this.consecutive[slot] = 0;
    this.cleanRun[slot] = CLEAN_RUN_CAP;
    this.ring[slot] = 0;
    this.ringCount[slot] = 0;
    this.lastOutcomeAt[slot] = 0;
    this.lastFailureAt[slot] = Number.NEGATIVE_INFINITY;
    this.timesEjected[slot] = 0;
    this.until[slot] = 0;
    this.returnedAt[slot] = Number.NEGATIVE_INFINITY;
    this.slow[slot] = 0;
    this.slowSince[slot] = 0;
    this.probeInFlight[slot] = 0;
    this.picksNow[slot] = 0;
    this.picksBefore[slot] = 0;
    return slot;
  }

  /** Returns `slot` to the free list (it must be in no set). */
  release(slot: number): void {
    const origin = this.origins[slot];
    if (origin !== undefined && this.byOrigin.get(origin) === slot) this.byOrigin.delete(origin);
    this.origins[slot] = undefined;
    this.state[slot] = SLOT.free;
    this.#freeSlots.push(slot);
  }

  #grow(capacity: number): void {
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(capacity);
      b.set(a);
      return b;
    };
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(capacity);
      b.set(a);
      return b;
    };
    const u8 = (a: Uint8Array) => {
      const b = new Uint8Array(capacity);
      b.set(a);
      return b;
    };
    this.state = u8(this.state);
    this.inFlight = i32(this.inFlight);
    this.sampled = u8(this.sampled);
    this.ewmaMs = f64(this.ewmaMs);
    this.ewmaAt = f64(this.ewmaAt);
    this.floorMs = f64(this.floorMs);
    this.floorCount = i32(this.floorCount);
    const ring = new Float64Array(capacity * FLOOR_SAMPLES);
    ring.set(this.floorRing);
    this.floorRing = ring;
    this.consecutive = i32(this.consecutive);
    this.cleanRun = i32(this.cleanRun);
    this.ring = i32(this.ring);
    this.ringCount = i32(this.ringCount);
    this.lastOutcomeAt = f64(this.lastOutcomeAt);
    this.lastFailureAt = f64(this.lastFailureAt);
    this.timesEjected = i32(this.timesEjected);
    this.until = f64(this.until);
    this.returnedAt = f64(this.returnedAt);
    this.slow = u8(this.slow);
    this.slowSince = f64(this.slowSince);
    this.probeInFlight = u8(this.probeInFlight);
    this.picksNow = f64(this.picksNow);
    this.picksBefore = f64(this.picksBefore);
    this.up.grow(capacity);
    this.members.grow(capacity);
    this.capacity = capacity;
  }
}
