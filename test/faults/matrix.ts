/**
 * The fault matrix: every fault the dependency double can produce × request kind × hedging, and
 * what prazo's client must do in each cell. Read by test/faults/fault-matrix.test.ts (which runs
 * every cell against real doubles on 127.0.0.1) and by test/faults/render-table.ts (which writes
 * docs/fault-matrix.md).
 *
 * Every cell uses two instances of the dependency and a fresh `dependency()`:
 * latency { p99Ms: 150 } → read and connect timeouts 210 ms; 2 attempts; deadline 1 200 ms unless the
 * row says otherwise; hedging at a fixed 50 ms when on. (Shorter timeouts work on a quiet machine;
 * on a shared 2-core one, scheduling pauses of 100 ms+ would turn healthy answers into timeouts.) A fresh client sends its first attempt to
 * instance 0, so "on instance 0" faults are always met first.
 */
import type { BehaviourInput } from '@prazo/lab/double';

/** The three request kinds: idempotent, not idempotent, and made idempotent by a key. */
export const REQUEST_KINDS = ['GET', 'POST', 'POST+key'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** Client settings shared by every cell. */
export const MATRIX_CLIENT = Object.freeze({
  p99Ms: 150,
  readMs: 210,
  attempts: 2,
  userDeadlineMs: 1_200,
  hedgeAtMs: 50,
});

/**
 * Time allowed past a cell's bound for scheduling on a loaded 2-core machine (timers fire late,
 * never early). Small next to the deadline; a client that waited a timeout or a Retry-After past
 * the deadline overshoots by far more.
 */
export const ALLOWANCE_MS = 250;

/**
 * An event-loop stall at least this long during a cell can by itself turn an answer into a read
 * timeout (the client and the doubles share the process). A row whose mismatching cells all saw
 * such a stall, or an attempt that timed out, is run again, at most {@link MAX_ROUNDS} rounds in
 * all, and judged on its last round; any other mismatch fails at once, and so does any breach of
 * the safety rules (a POST received twice, a repeated key) in any round.
 */
export const STALL_MS = 100;
export const MAX_ROUNDS = 3;

/**
 * What one cell must produce.
 * - `outcome`: `status N` (the call resolved with that status and its body was read),
 *   `status N, body cut` (resolved, then the body failed), or `error CODE` (rejected with that code).
 * - `seen`: requests the servers received, both instances together: exact, or [min, max].
 * - `maxElapsedMs`: bound on the call's duration, body included (the allowance is added on top).
 * - `minElapsedMs`: when the call must have waited (a Retry-After).
 */
export interface Expectation {
  outcome: string;
  seen: number | readonly [number, number];
  maxElapsedMs: number;
  minElapsedMs?: number;
}

export interface FaultRow {
  /** Short stable id (test names, table anchors). */
  id: string;
  /** The fault, as the issue names it. */
  fault: string;
  /** Where the fault is: both instances, or instance 0 only (instance 1 healthy). */
  where: 'both' | 'instance 0';
  /** Behaviour of instance 0 and instance 1 (undefined = healthy). */
  behaviours: readonly [BehaviourInput | undefined, BehaviourInput | undefined];
  /** Instance 0's origin is a hostname whose lookup fails (ENOTFOUND), resolved locally. */
  unresolvable?: boolean;
  /** The call's deadline, in ms. @default MATRIX_CLIENT.userDeadlineMs */
  userDeadlineMs?: number;
  /** The expectation of each cell. */
  expect(kind: RequestKind, hedge: boolean): Expectation;
  /** Why: the rule of the design that gives this row its expectations. */
  why: string;
}

const D = MATRIX_CLIENT.userDeadlineMs;
/** Two tries of a fault that answers at once: well inside the deadline. */
const FAST = 400;

const idempotent = (kind: RequestKind) => kind !== 'POST';

/** A retryable status on every instance: two tries when idempotent, one for a plain POST. */
function storm(status: number): FaultRow {
  return {
    id: `status-${status}`,
    fault: `${status} storm`,
    where: 'both',
    behaviours: [{ statuses: [{ status, share: 1 }] }, { statuses: [{ status, share: 1 }] }],
    expect: (kind, hedge) => ({
      outcome: `status ${status}`,
      seen: !idempotent(kind) ? 1 : hedge ? [2, 4] : 2,
      maxElapsedMs: FAST,
    }),
    why: `${status} is retryable, so an idempotent call tries twice and returns the last ${status} (a try whose answer takes longer than the hedge delay is hedged too); a POST without a key may have been processed and is never sent again.`,
  };
}

/** Connects to instance 0 fail; instance 1 answers: every kind succeeds on instance 1. */
function connectFault(
  id: string,
  fault: string,
  behaviour: BehaviourInput | undefined,
  why: string,
  extra: Partial<FaultRow> = {},
): FaultRow {
  return {
    id,
    fault,
    where: 'instance 0',
    behaviours: [behaviour, undefined],
    expect: () => ({ outcome: 'status 200', seen: 1, maxElapsedMs: D }),
    why,
    ...extra,
  };
}

export const FAULT_MATRIX: readonly FaultRow[] = [
  connectFault(
    'refused',
    'refused connection',
    { refuse: true },
    'Nothing was sent: even a POST is retried, at once, on the other instance.',
  ),
  connectFault(
    'connect-timeout',
    'connect timeout',
    { connectTimeout: true },
    'The connect never completed, so nothing was sent: retry on the other instance (a POST too); the hedge, when on, reaches instance 1 first.',
  ),
  connectFault(
    'dns',
    'DNS failure of one origin',
    undefined,
    'The name of instance 0 does not resolve (ENOTFOUND, from a local lookup: no query leaves the machine); nothing was sent, so retry on instance 1.',
    { unresolvable: true },
  ),
  {
    id: 'hang',
    fault: 'hang before headers',
    where: 'both',
    behaviours: [{ hang: true }, { hang: true }],
    expect: (kind, hedge) => ({
      outcome: 'error READ_TIMEOUT',
      seen: !idempotent(kind) ? 1 : hedge ? [2, 4] : 2,
      maxElapsedMs: D,
    }),
    why: 'Each try is cut at the 210 ms read timeout; an idempotent call gets a second try (hedged too when on); a POST reached the server and is not repeated.',
  },
  {
    id: 'reset-before-headers',
    fault: 'reset before headers',
    where: 'both',
    behaviours: [{ resetBeforeHeaders: true }, { resetBeforeHeaders: true }],
    expect: (kind, hedge) => ({
      outcome: 'error REQUEST_FAILED',
      seen: !idempotent(kind) ? 1 : hedge ? [2, 4] : 2,
      maxElapsedMs: FAST,
    }),
    why: 'The request reached the server, which dropped the connection: read phase. Idempotent calls retry once; a POST is not repeated.',
  },
  {
    id: 'reset-mid-body',
    fault: 'reset mid-body',
    where: 'both',
    behaviours: [{ resetMidBody: true }, { resetMidBody: true }],
    expect: (kind, hedge) => ({
      outcome: 'status 200, body cut',
      seen: hedge && idempotent(kind) ? [1, 2] : 1,
      maxElapsedMs: FAST,
    }),
    why: 'The 200 and its headers arrived, so the call resolved (a hedge is sent only if they take longer than the hedge delay); the body then fails while the caller reads it. Nothing is retried after a response.',
  },
  {
    id: 'slow-body',
    fault: 'slow body (within the deadline)',
    where: 'both',
    behaviours: [{ slowBodyMs: 300 }, { slowBodyMs: 300 }],
    expect: (kind, hedge) => ({
      outcome: 'status 200',
      seen: hedge && idempotent(kind) ? [1, 2] : 1,
      maxElapsedMs: D,
      minElapsedMs: 250,
    }),
    why: 'Headers at once, the body in 10 chunks over 300 ms, well inside the deadline: the body arrives whole.',
  },
  {
    id: 'slow-body-past-deadline',
    fault: 'slow body (past the deadline)',
    where: 'both',
    behaviours: [{ slowBodyMs: 5_000 }, { slowBodyMs: 5_000 }],
    expect: (kind, hedge) => ({
      outcome: 'status 200, body cut',
      seen: hedge && idempotent(kind) ? [1, 2] : 1,
      maxElapsedMs: D,
    }),
    why: 'The body drips over 5 s (500 ms between chunks): the response arrived in time, but reading its body holds the connection. The read is cut — by the idle timeout between chunks (undici, ~0.5–1 s granularity) or at the latest by the deadline (DEADLINE_EXCEEDED) — and the connection released.',
  },
  storm(500),
  storm(502),
  storm(503),
  storm(504),
  {
    id: 'status-429-short',
    fault: '429 with a short Retry-After (1 s)',
    where: 'both',
    behaviours: [
      { statuses: [{ status: 429, share: 1, retryAfter: '1' }] },
      { statuses: [{ status: 429, share: 1, retryAfter: '1' }] },
    ],
    userDeadlineMs: 2_500,
    expect: (kind, hedge) => ({
      outcome: 'status 429',
      seen: hedge && idempotent(kind) ? [2, 4] : 2,
      maxElapsedMs: 2_500,
      minElapsedMs: 1_000,
    }),
    why: 'Deadline 2.5 s: 1 s of Retry-After plus a p99 fits, so prazo waits exactly 1 s and tries again — a POST too, since a 429 is a refusal before any work.',
  },
  {
    id: 'status-429-long',
    fault: '429 with a too-long Retry-After (1 h)',
    where: 'both',
    behaviours: [
      { statuses: [{ status: 429, share: 1, retryAfter: '3600' }] },
      { statuses: [{ status: 429, share: 1, retryAfter: '3600' }] },
    ],
    expect: (kind, hedge) => ({
      outcome: 'error RETRY_AFTER_EXCEEDS_DEADLINE',
      seen: hedge && idempotent(kind) ? [1, 2] : 1,
      maxElapsedMs: FAST,
    }),
    why: 'An hour of Retry-After cannot fit a 1.2 s deadline: fail at once instead of sleeping the deadline away.',
  },
];

/** Every cell: row × kind × hedging. */
export function matrixCells(): Array<{ row: FaultRow; kind: RequestKind; hedge: boolean }> {
  const cells: Array<{ row: FaultRow; kind: RequestKind; hedge: boolean }> = [];
  for (const row of FAULT_MATRIX)
    for (const kind of REQUEST_KINDS) for (const hedge of [false, true]) cells.push({ row, kind, hedge });
  return cells;
}

/** `2`, or `2–4`. */
export function formatSeen(seen: Expectation['seen']): string {
  return typeof seen === 'number' ? String(seen) : `${seen[0]}–${seen[1]}`;
}
