// TEMPORARY: a stand-in with the signature of prazo's Deadline (issue 4), not on main yet. Replaced by
// an import of the real module as it lands; this file is deleted before the branch is finished.
import type { Clock } from '../../clock.js';

export class Deadline {
  readonly limitMs: number;
  readonly clock: Clock;
  private constructor(limitMs: number, clock: Clock) {
    this.limitMs = limitMs;
    this.clock = clock;
  }
  static after(ms: number, clock: Clock): Deadline {
    return new Deadline(clock.now() + ms, clock);
  }
  remainingMs(): number {
    return Math.max(0, this.limitMs - this.clock.now());
  }
}
