import type { Timer } from '../../clock.js';
import type { Call, Interruptible } from '../call.js';
import type { DependencyContext } from '../pipeline.js';

/**
 * A call's wait on the dependency's clock (a retry delay, the wait for a first set of origins). While
 * it lasts it is what the call waits on and one of the dependency's sleepers, so the caller's
 * cancellation or `close()` ends it early; `done` then resolves (it never rejects) and the step that
 * waited looks at why.
 */
export class Sleep implements Interruptible {
  /** Resolves when the time is up or the wait was ended early. */
  readonly done: Promise<void>;
  readonly #ctx: DependencyContext;
  readonly #call: Call;
  #resolve: (() => void) | null = null;
  #timer: Timer | null = null;

  constructor(ctx: DependencyContext, call: Call, ms: number) {
    this.#ctx = ctx;
    this.#call = call;
    this.done = new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
    this.#timer = ctx.clock.setTimeout(this.wake, ms);
    call.waitOn(this);
    ctx.sleepers.add(call);
  }

  /** Ends the wait now (a no-op once it has ended). */
  readonly wake = (): void => {
    const resolve = this.#resolve;
    if (resolve === null) return;
    this.#resolve = null;
    if (this.#timer !== null) this.#ctx.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#ctx.sleepers.delete(this.#call);
    this.#call.stopWaiting(this);
    resolve();
  };

  interrupt(): void {
    this.wake();
  }
}

/** Waits `ms` on the dependency's clock; the caller's cancellation or `close()` ends the wait early. */
export function sleep(ctx: DependencyContext, call: Call, ms: number): Promise<void> {
  return new Sleep(ctx, call, ms).done;
}
