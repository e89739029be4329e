import type { Clock, Timer } from '../clock.js';

/**
 * A {@link Clock} that only moves when told to. Timers fire in order of due time (then of
 * creation) while {@link FakeClock.advance} moves time forward. For tests and the simulator.
 */
export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void;
  /** Moves time to `epochMs` (never backwards), firing due timers. */
  advanceTo(epochMs: number): void;
  /** Number of timers still pending. */
  pendingTimers(): number;
}

interface FakeTimer extends Timer {
  due: number;
  seq: number;
  callback: () => void;
}

/** Creates a {@link FakeClock} starting at `startMs` (default 0). */
export function createFakeClock(startMs = 0): FakeClock {
  let now = startMs;
  let seq = 0;
  const timers = new Set<FakeTimer>();

  const nextDue = (limit: number): FakeTimer | undefined => {
    let best: FakeTimer | undefined;
    for (const t of timers) {
      if (t.due > limit) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    }
    return best;
  };

  const advanceTo = (target: number): void => {
    for (;;) {
      const t = nextDue(target);
      if (!t) break;
      timers.delete(t);
      if (t.due > now) now = t.due;
      t.callback();
    }
    if (target > now) now = target;
  };

  return {
    now: () => now,
    setTimeout(callback, delayMs) {
      const timer: FakeTimer = {
        due: now + Math.max(0, Number.isFinite(delayMs) ? delayMs : 0),
        seq: seq++,
        callback,
        unref: () => timer,
      };
      timers.add(timer);
      return timer;
    },
    clearTimeout(timer) {
      timers.delete(timer as FakeTimer);
    },
    advance: (ms) => advanceTo(now + ms),
    advanceTo,
    pendingTimers: () => timers.size,
  };
}
