import type { AbortLike, AbortListener } from '../transport/transport.js';

/** An abort handle like the client's attempt object, for tests that drive a transport directly. */
export interface TestAbortHandle extends AbortLike {
  /** Aborts with `reason`, telling the one listener (as the attempt does). */
  abort(reason: Error): void;
  /** Whether a listener is registered. */
  readonly listening: boolean;
}

/** Creates a {@link TestAbortHandle}: one listener at a time, as the transport registers it. */
export function createAbortHandle(): TestAbortHandle {
  let listener: AbortListener | null = null;
  const handle = {
    aborted: false,
    reason: undefined as unknown,
    addEventListener(_type: 'abort', l: AbortListener) {
      listener = l;
    },
    removeEventListener(_type: 'abort', l: AbortListener) {
      if (listener === l) listener = null;
    },
    abort(reason: Error) {
      handle.aborted = true;
      handle.reason = reason;
      const l = listener;
      listener = null;
      if (typeof l === 'function') l();
      else l?.handleEvent();
    },
    get listening() {
      return listener !== null;
    },
  };
  return handle;
}
