import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../clock.js';
import {
  type DependencyWait,
  formatHopTiming,
  type HopTiming,
  MAX_HOP_DEPENDENCIES,
} from '../wire/server-timing.js';

/**
 * Where one request's deadline goes inside this service, as a prazo server adapter measures it: time
 * left on arrival, time queued for admission, time in the handler, and the time the handler waited
 * on each of its prazo dependencies (wall time with at least one call to it in flight, so that
 * concurrent calls are not counted twice). The client of every dependency called inside the
 * request reports to it ({@link currentHopTally}); the adapter writes it as `Server-Timing` when the
 * response headers go out.
 */
export class HopTally {
  /** Epoch ms the request arrived at (the adapter's first look at it). */
  readonly arrivalMs: number;
  /** Time left of the deadline on arrival, in ms. */
  readonly leftMs: number;
  /** Epoch ms the handler started (admission let it through); the arrival until then. */
  handlerStartMs: number;
  #inFlight = 0;
  #busySinceMs = 0;
  /** Wall time with any dependency call in flight, ms (up to the last call's end). */
  #waitedMs = 0;
  #waits: TallyWait[] | null = null;

  /** The server's clock. */
  readonly clock: Clock;

  constructor(clock: Clock, arrivalMs: number, leftMs: number) {
    this.clock = clock;
    this.arrivalMs = arrivalMs;
    this.leftMs = leftMs;
    this.handlerStartMs = arrivalMs;
  }

  /** Admission let the request through to its handler: its queued time ends now. */
  handlerStarted(): void {
    this.handlerStartMs = this.clock.now();
  }

  /** A call to the dependency `name` starts at `nowMs`. */
  begin(name: string, nowMs: number): void {
    if (this.#inFlight++ === 0) this.#busySinceMs = nowMs;
    const wait = this.#waitOn(name, nowMs);
    if (wait !== null && wait.inFlight++ === 0) wait.sinceMs = nowMs;
  }

  /** A call to `name` ended at `nowMs`; `said` is what its last answer said of itself (`Server-Timing`), if anything. */
  end(name: string, nowMs: number, said: HopTiming | null): void {
    if (this.#inFlight > 0 && --this.#inFlight === 0) this.#waitedMs += nowMs - this.#busySinceMs;
    const wait = this.#find(name);
    if (wait === null || wait.inFlight === 0) return;
    if (--wait.inFlight === 0) wait.waitedMs += nowMs - wait.sinceMs;
    if (said !== null) wait.said = said;
  }

  /** Time waited on dependencies up to `nowMs` (calls still in flight count until then), ms. */
  waitedMs(nowMs: number): number {
    return this.#inFlight > 0 ? this.#waitedMs + nowMs - this.#busySinceMs : this.#waitedMs;
  }

  /** The hop as it stands at `nowMs` (the response headers go out), with its dependencies' own timing. */
  timing(nowMs: number): HopTiming & { dependencies: DependencyWait[] } {
    const dependencies: DependencyWait[] = [];
    if (this.#waits !== null)
      for (const wait of this.#waits) {
        const waitedMs = wait.inFlight > 0 ? wait.waitedMs + nowMs - wait.sinceMs : wait.waitedMs;
        dependencies.push({ name: wait.name, waitedMs, hop: wait.said });
      }
    return {
      leftMs: this.leftMs,
      queuedMs: this.handlerStartMs - this.arrivalMs,
      handlerMs: nowMs - this.handlerStartMs,
      dependencies,
    };
  }

  /**
   * {@link HopTally.timing} as a `Server-Timing` value; without `chain`, only this hop's own
   * metrics (no dependency names, no time spent below).
   */
  header(nowMs: number, chain: boolean): string {
    const timing = this.timing(nowMs);
    if (!chain) timing.dependencies.length = 0;
    return formatHopTiming(timing);
  }

  #find(name: string): TallyWait | null {
    const waits = this.#waits;
    if (waits !== null) for (const wait of waits) if (wait.name === name) return wait;
    return null;
  }

  #waitOn(name: string, _nowMs: number): TallyWait | null {
    const found = this.#find(name);
    if (found !== null) return found;
    // Past the names the header carries, the time still counts in the hop's total wait.
    if (this.#waits !== null && this.#waits.length === MAX_HOP_DEPENDENCIES) return null;
    const wait: TallyWait = { name, inFlight: 0, sinceMs: 0, waitedMs: 0, said: null };
    if (this.#waits === null) this.#waits = [wait];
    else this.#waits.push(wait);
    return wait;
  }
}

interface TallyWait {
  readonly name: string;
  inFlight: number;
  sinceMs: number;
  waitedMs: number;
  /** What the dependency's last answer said of itself. */
  said: HopTiming | null;
}

// Private, like the deadline's store: only the server adapters enter it.
const storage = new AsyncLocalStorage<HopTally>();

/**
 * Runs `fn` with `tally` as the request's hop tally: prazo's client reports the calls made inside.
 * @internal Used by the server adapters.
 */
export function withHopTally<T>(tally: HopTally, fn: () => T): T {
  return storage.run(tally, fn);
}

/** The tally of the request being handled, when a prazo server adapter handles one. */
export function currentHopTally(): HopTally | undefined {
  return storage.getStore();
}
