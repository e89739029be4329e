import { ATTEMPT_HEADER, type AttemptKind, DEADLINE_HEADER, parseAttemptHeader } from 'prazo/wire';

/** One request as the double saw it on arrival. */
export interface RequestRecord {
  readonly method: string;
  /** Path and query as sent. */
  readonly path: string;
  /** Attempt number from the attempt header, or `null` when absent or malformed. */
  readonly attempt: number | null;
  /** Kind from the attempt header, or `null` when absent or malformed (counted as an original). */
  readonly kind: AttemptKind | null;
  /** The request's absolute deadline (epoch ms) from `x-deadline-epoch-ms`, or `null`. */
  readonly deadlineMs: number | null;
  /** Arrival instant (epoch ms, from the double's clock). */
  readonly arrivedAtMs: number;
  /** `Idempotency-Key` header, or `null`. */
  readonly idempotencyKey: string | null;
}

/** Faults the double produced, by kind. */
export interface FaultCounts {
  hang: number;
  resetBeforeHeaders: number;
  resetMidBody: number;
  /** Requests that arrived on an already open connection while the double refused: socket destroyed. */
  droppedWhileRefusing: number;
}

/** What a double has received since it started or was last reset. A plain JSON-able snapshot. */
export interface DoubleStats {
  /** Requests received (admin requests excluded). */
  received: number;
  /** Requests whose attempt header said `original`, plus those without a readable header. */
  originals: number;
  retries: number;
  hedges: number;
  /** Requests without a readable attempt header (also counted in `originals`). */
  unknownKind: number;
  /** Requests that arrived at or after the instant in their `x-deadline-epoch-ms` header: work for nobody. */
  afterDeadline: number;
  /** Requests currently being handled (including hung ones). */
  inFlight: number;
  /** Highest `inFlight` seen. */
  maxInFlight: number;
  /** Responses whose headers were sent, by status code. */
  byStatus: Record<string, number>;
  /** Requests received, by method. */
  byMethod: Record<string, number>;
  faults: FaultCounts;
  /** Requests whose `Idempotency-Key` had already been seen (within the last 10 000 keys). */
  idempotencyKeyRepeats: number;
  /** The last requests received, oldest first (at most `keepRequests`). */
  requests: RequestRecord[];
}

/** The request fields the counter reads (a subset of `IncomingMessage`). */
export interface ArrivingRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Bookkeeping of one double. Pure: time comes in as an argument. */
export interface StatsCounter {
  /** Counts a request on arrival and returns its record. */
  arrive(request: ArrivingRequest, nowMs: number): RequestRecord;
  /** A request left (answered, failed or abandoned). */
  leave(): void;
  status(code: number): void;
  fault(kind: keyof FaultCounts): void;
  snapshot(): DoubleStats;
  /** Zeroes every counter (requests still in flight stay counted in `inFlight`). */
  reset(): void;
}

const REMEMBERED_KEYS = 10_000;

/**
 * Creates the counters of a double.
 *
 * @param keepRequests - how many request records to keep (0 keeps none).
 */
export function createStatsCounter(keepRequests: number): StatsCounter {
  let counts = zero();
  let byStatus = new Map<string, number>();
  let byMethod = new Map<string, number>();
  let keys = new Map<string, true>();
  let ring: RequestRecord[] = [];
  let next = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  return {
    arrive(request, nowMs) {
      const info = parseAttemptHeader(request.headers[ATTEMPT_HEADER]);
      const deadlineMs = parseDeadline(request.headers[DEADLINE_HEADER]);
      const keyHeader = request.headers['idempotency-key'];
      const idempotencyKey = typeof keyHeader === 'string' ? keyHeader : null;
      const method = request.method ?? 'GET';
      counts.received++;
      if (!info) {
        counts.unknownKind++;
        counts.originals++;
      } else if (info.kind === 'original') counts.originals++;
      else if (info.kind === 'retry') counts.retries++;
      else counts.hedges++;
      if (deadlineMs !== null && nowMs >= deadlineMs) counts.afterDeadline++;
      if (idempotencyKey !== null) {
        if (keys.has(idempotencyKey)) counts.idempotencyKeyRepeats++;
        else {
          keys.set(idempotencyKey, true);
          if (keys.size > REMEMBERED_KEYS) keys.delete(keys.keys().next().value as string);
        }
      }
      bump(byMethod, method);
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      const record: RequestRecord = {
        method,
        path: request.url ?? '/',
        attempt: info?.attempt ?? null,
        kind: info?.kind ?? null,
        deadlineMs,
        arrivedAtMs: nowMs,
        idempotencyKey,
      };
      if (keepRequests > 0) {
        if (ring.length < keepRequests) ring.push(record);
        else ring[next] = record;
        next = (next + 1) % keepRequests;
      }
      return record;
    },
    leave() {
      if (inFlight > 0) inFlight--;
    },
    status(code) {
      bump(byStatus, String(code));
    },
    fault(kind) {
      counts.faults[kind]++;
    },
    snapshot() {
      const ordered =
        ring.length < keepRequests ? ring.slice() : [...ring.slice(next), ...ring.slice(0, next)];
      return {
        received: counts.received,
        originals: counts.originals,
        retries: counts.retries,
        hedges: counts.hedges,
        unknownKind: counts.unknownKind,
        afterDeadline: counts.afterDeadline,
        inFlight,
        maxInFlight,
        byStatus: Object.fromEntries(byStatus),
        byMethod: Object.fromEntries(byMethod),
        faults: { ...counts.faults },
        idempotencyKeyRepeats: counts.idempotencyKeyRepeats,
        requests: ordered,
      };
    },
    reset() {
      counts = zero();
      byStatus = new Map();
      byMethod = new Map();
      keys = new Map();
      ring = [];
      next = 0;
      maxInFlight = inFlight;
    },
  };
}

/** Reads `x-deadline-epoch-ms`: a plain non-negative integer, else `null` (malformed means absent). */
export function parseDeadline(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\s*\d{1,16}\s*$/.test(value)) return null;
  return Number(value);
}

function zero() {
  return {
    received: 0,
    originals: 0,
    retries: 0,
    hedges: 0,
    unknownKind: 0,
    afterDeadline: 0,
    idempotencyKeyRepeats: 0,
    faults: { hang: 0, resetBeforeHeaders: 0, resetMidBody: 0, droppedWhileRefusing: 0 },
  };
}
