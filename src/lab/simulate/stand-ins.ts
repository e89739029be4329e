// TEMPORARY: stand-ins with the signatures of prazo's policy components that have not landed on main
// yet (issues 2, 3, 4, 5). Each is replaced by an import of the real module as it lands; this file is
// deleted before the branch is finished.
import type { Clock } from '../../clock.js';

export function createRetryBudget(o: {
  windowMs?: number;
  maxRatio?: number;
  minPerSecond?: number;
  clock: Clock;
}) {
  const windowMs = o.windowMs ?? 10_000;
  const maxRatio = o.maxRatio ?? 0.1;
  const floor = ((o.minPerSecond ?? 3) * windowMs) / 1000;
  const n = 100;
  const orig = new Float64Array(n);
  const ext = new Float64Array(n);
  let head = Number.NaN;
  let originals = 0;
  let extras = 0;
  const adv = () => {
    const index = Math.floor((o.clock.now() * n) / windowMs);
    if (index === head) return index % n;
    if (!(index - head < n)) {
      orig.fill(0);
      ext.fill(0);
      originals = 0;
      extras = 0;
    } else
      for (let k = head + 1; k <= index; k++) {
        originals -= orig[k % n]!;
        extras -= ext[k % n]!;
        orig[k % n] = 0;
        ext[k % n] = 0;
      }
    head = index;
    return index % n;
  };
  return {
    recordOriginal() {
      orig[adv()]!++;
      originals++;
    },
    tryConsume() {
      const s = adv();
      if (!(extras < Math.max(floor, originals * maxRatio))) return false;
      ext[s]!++;
      extras++;
      return true;
    },
    state: () => ({ originals, extras, ratio: originals ? extras / originals : 0 }),
  };
}
export type RetryBudget = ReturnType<typeof createRetryBudget>;

export type AttemptOutcome =
  | { kind: 'response'; status: number }
  | { kind: 'error'; error: { code: string } };
export interface Classification {
  retry: boolean;
  phase: 'connect' | 'read' | 'response';
  reason: string;
  anotherInstance: boolean;
}
export function classify(
  outcome: AttemptOutcome,
  _o: { idempotent: boolean; nowMs?: number },
): Classification {
  if (outcome.kind === 'response')
    return {
      retry: [408, 429, 500, 502, 503, 504].includes(outcome.status),
      phase: 'response',
      reason: String(outcome.status),
      anotherInstance: false,
    };
  return { retry: true, phase: 'read', reason: outcome.error.code, anotherInstance: true };
}

export function backoffDelayMs(o: {
  retryIndex: number;
  baseMs?: number;
  capMs?: number;
  random?: () => number;
}) {
  const cap = Math.min(o.capMs ?? 1000, (o.baseMs ?? 50) * 2 ** o.retryIndex);
  return (o.random ?? Math.random)() * cap;
}

export type RetryPlan =
  | { retry: true; delayMs: number; anotherInstance: boolean }
  | { retry: false; code: string; reason: string };
export function planRetry(o: {
  classification: Classification;
  attemptsMade: number;
  maxAttempts: number;
  remainingMs: number;
  p99Ms: number;
  budget: RetryBudget;
  random?: () => number;
  backoff?: { baseMs?: number; capMs?: number };
}): RetryPlan {
  if (!o.classification.retry) return { retry: false, code: 'NOT_RETRYABLE', reason: '' };
  if (o.attemptsMade >= o.maxAttempts) return { retry: false, code: 'ATTEMPTS_EXHAUSTED', reason: '' };
  const delayMs = backoffDelayMs({
    retryIndex: o.attemptsMade - 1,
    ...(o.random ? { random: o.random } : {}),
  });
  if (o.remainingMs < delayMs + o.p99Ms) return { retry: false, code: 'DEADLINE_INSUFFICIENT', reason: '' };
  if (!o.budget.tryConsume()) return { retry: false, code: 'RETRY_BUDGET_EXHAUSTED', reason: '' };
  return { retry: true, delayMs, anotherInstance: false };
}

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

export function calibrateTimeout(
  p: { p99Ms: number; userDeadlineMs: number; attempts?: number },
  o: { slack?: number } = {},
) {
  const readMs = Math.ceil(p.p99Ms * (o.slack ?? 1.4));
  const want = p.attempts ?? 2;
  const attempts = Math.max(1, Math.min(want, Math.floor(p.userDeadlineMs / (readMs + 30))));
  return {
    connectMs: Math.min(400, readMs),
    readMs,
    attempts,
    warning: attempts < want ? { code: 'ATTEMPTS_REDUCED', message: '' } : null,
  };
}
