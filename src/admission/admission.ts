import { AsyncResource } from 'node:async_hooks';
import type { Deadline } from '../deadline/deadline.js';
import { isPrazoError } from '../errors.js';
import { DurationBuckets } from '../latency/duration-buckets.js';
import type { Criticality } from '../wire/criticality-header.js';
import { decideArrival, type RefusalReason, refusalStatus } from './admission-decision.js';
import {
  type AdmissionOptions,
  type NormalizedAdmissionOptions,
  normalizeAdmissionOptions,
} from './admission-options.js';
import { AdmissionQueue } from './admission-queue.js';
import { RouteServiceTimes, type RouteStats } from './route-service-time.js';

/** A refused request: what the server adapter answers (see docs/overload.md). */
export interface Refusal {
  reason: RefusalReason;
  /** 504 when the deadline is the problem, 503 (with `Retry-After`) when the load is. */
  status: 503 | 504;
  /** The route key the request counted under. */
  route: string;
  criticality: Criticality;
  /** Time left before the request's deadline when it was refused, in ms. */
  remainingMs: number;
  /** The route's expected service time in force, in ms (undefined while it has too few samples). */
  expectedMs: number | undefined;
  /** How long it waited in the queue, in ms (0 when refused on arrival). */
  queuedMs: number;
  /** `Retry-After` in seconds for a 503; undefined for a 504. */
  retryAfterSeconds: number | undefined;
}

/** A request handed to its handler: release it once its response is done. */
export interface AdmissionTicket {
  /**
   * Frees the request's slot (idempotent). `finished`: the response was sent in full, so its
   * duration counts as a service time of the route; false for a client that went away.
   */
  release(finished: boolean): void;
}

/** The queue's overload state changed (CoDel). */
export interface OverloadEvent {
  overloaded: boolean;
  queueLength: number;
  inFlight: number;
}

/** Events of an {@link Admission}, by name. */
export interface AdmissionEvents {
  refused: Refusal;
  overload: OverloadEvent;
}

/** One route's figures, as the metrics adapters read them. */
export interface AdmissionRouteView {
  readonly key: string;
  readonly expectedMs: number | undefined;
  /** Admitted requests by criticality (critical, default, sheddable). */
  readonly admitted: Float64Array;
  /** Refusals indexed `REFUSAL_REASONS index × 3 + criticality index`. */
  readonly refused: Float64Array;
}

/**
 * Deadline-aware admission for a server, shared by the routes (and adapters) that use it. Create one
 * per process (or per resource it protects) and hand it to `prazo/http`, `prazo/express` or
 * `prazo/fastify`.
 */
export interface Admission {
  /**
   * Offers an arriving request: `run` is called when it may go to its handler (now, or later from
   * the queue, in the request's own async context), `refuse` when it is refused (now, or later from
   * the queue). A queued request whose client goes away gets neither.
   */
  offer(
    route: string,
    deadline: Deadline,
    criticality: Criticality,
    run: (ticket: AdmissionTicket) => void,
    refuse: (refusal: Refusal) => void,
  ): void;
  /** Counts a request that arrived after its deadline (the adapter answered 504 itself). */
  countExpired(route: string, criticality: Criticality): void;
  /** Requests in their handlers now. */
  readonly inFlight: number;
  /** Requests waiting in the queue now. */
  readonly queueLength: number;
  /** Whether CoDel finds the queue overloaded (LIFO, dropping long waits). */
  readonly overloaded: boolean;
  /** The options in force. */
  readonly options: Readonly<NormalizedAdmissionOptions>;
  /** Sojourn times of the requests that waited in the queue and then ran, in seconds (series 0). */
  readonly sojourn: DurationBuckets;
  /** The tracked routes. */
  routes(): Iterable<AdmissionRouteView>;
  on<K extends keyof AdmissionEvents>(event: K, listener: (e: AdmissionEvents[K]) => void): this;
  off<K extends keyof AdmissionEvents>(event: K, listener: (e: AdmissionEvents[K]) => void): this;
}

interface Entry {
  readonly criticality: Criticality;
  readonly enqueuedAt: number;
  readonly route: RouteStats;
  readonly deadline: Deadline;
  readonly run: (ticket: AdmissionTicket) => void;
  readonly refuse: (refusal: Refusal) => void;
  onAbort: () => void;
}

/**
 * Creates an {@link Admission}. With the defaults it only refuses a request whose remaining deadline
 * is below its route's expected service time (504); `maxInFlight` adds the in-flight limit and the
 * CoDel queue (503 + `Retry-After` when it sheds).
 *
 * @throws {@link InvalidOptionError} for bad options.
 * @example
 * const admission = createAdmission({ maxInFlight: 64 });
 * app.get('/orders/:id', admissionMiddleware(admission), handler);
 * @see docs/overload.md
 */
export function createAdmission(options: AdmissionOptions = {}): Admission {
  const o = normalizeAdmissionOptions(options);
  const clock = o.clock;
  const table = new RouteServiceTimes({
    percentile: o.serviceTimePercentile,
    minSamples: o.minSamples,
    refreshMs: o.refreshMs,
    maxRoutes: o.maxRoutes,
    windowMs: o.windowMs,
    clock,
  });
  const queue = new AdmissionQueue<Entry>(o.codelTargetMs, o.codelIntervalMs);
  const sojourn = new DurationBuckets(1);
  const limited = o.maxInFlight !== Number.POSITIVE_INFINITY;
  const listeners: { [K in keyof AdmissionEvents]: Array<(e: AdmissionEvents[K]) => void> } = {
    refused: [],
    overload: [],
  };
  let inFlight = 0;
  let overloaded = false;
  const dropped: Entry[] = [];

  const emit = <K extends keyof AdmissionEvents>(event: K, payload: AdmissionEvents[K]): void => {
    for (const listener of listeners[event]) {
      try {
        listener(payload);
      } catch (error) {
        process.emitWarning(`prazo admission: a '${event}' listener threw: ${String(error)}`);
      }
    }
  };
  const noteOverload = (): void => {
    if (queue.overloaded === overloaded) return;
    overloaded = queue.overloaded;
    if (listeners.overload.length > 0) emit('overload', { overloaded, queueLength: queue.length, inFlight });
  };

  const refuse = (
    route: RouteStats,
    criticality: Criticality,
    reason: RefusalReason,
    remainingMs: number,
    queuedMs: number,
    answer: (refusal: Refusal) => void,
  ): void => {
    route.countRefused(reason, criticality);
    const status = refusalStatus(reason);
    const refusal: Refusal = {
      reason,
      status,
      route: route.key,
      criticality,
      remainingMs,
      expectedMs: route.expectedMs,
      queuedMs,
      retryAfterSeconds: status === 503 ? o.retryAfterSeconds : undefined,
    };
    if (listeners.refused.length > 0) emit('refused', refusal);
    answer(refusal);
  };

  const start = (route: RouteStats, criticality: Criticality, run: (t: AdmissionTicket) => void): void => {
    inFlight++;
    route.countAdmitted(criticality);
    const startedAt = clock.now();
    let released = false;
    run({
      release(finished) {
        if (released) return;
        released = true;
        inFlight--;
        const now = clock.now();
        if (finished) route.record(now - startedAt);
        if (limited) drain(now);
      },
    });
  };

  const leave = (entry: Entry): void => {
    entry.deadline.signal.removeEventListener('abort', entry.onAbort);
  };

  const drain = (now: number): void => {
    while (inFlight < o.maxInFlight) {
      const entry = queue.take(now, dropped);
      if (dropped.length > 0) {
        for (const d of dropped.splice(0)) {
          leave(d);
          refuse(
            d.route,
            d.criticality,
            'queue-delay',
            d.deadline.limitMs - now,
            now - d.enqueuedAt,
            d.refuse,
          );
        }
      }
      noteOverload();
      if (entry === undefined) return;
      leave(entry);
      const remainingMs = entry.deadline.limitMs - now;
      const expected = entry.route.expectedMs;
      if (remainingMs <= 0 || (expected !== undefined && remainingMs < expected)) {
        refuse(
          entry.route,
          entry.criticality,
          remainingMs <= 0 ? 'queue-expired' : 'insufficient',
          remainingMs,
          now - entry.enqueuedAt,
          entry.refuse,
        );
        continue;
      }
      sojourn.record(0, (now - entry.enqueuedAt) / 1000);
      start(entry.route, entry.criticality, entry.run);
    }
  };

  const admission: Admission = {
    offer(key, deadline, criticality, run, answer) {
      const now = clock.now();
      const route = table.route(key);
      route.refreshIfDue(now, table);
      if (limited) {
        queue.advance(now);
        noteOverload();
      }
      const remainingMs = deadline.limitMs - now;
      const decision = decideArrival({
        remainingMs,
        expectedMs: route.expectedMs,
        criticality,
        inFlight,
        maxInFlight: o.maxInFlight,
        queueLength: queue.length,
        maxQueue: o.maxQueue,
        sheddableQueue: o.sheddableQueue,
        overloaded: queue.overloaded,
        leastWaiting: limited ? queue.leastWaiting() : undefined,
      });
      if (decision === 'run') {
        if (limited) queue.bypassed();
        start(route, criticality, run);
        return;
      }
      if (decision !== 'queue') {
        refuse(route, criticality, decision, remainingMs, 0, answer);
        return;
      }
      const signal = deadline.signal;
      const entry: Entry = {
        criticality,
        enqueuedAt: now,
        route,
        deadline,
        // Run later from another request's event: in this request's own async context.
        run: AsyncResource.bind(run),
        refuse: answer,
        onAbort: () => {
          if (!queue.remove(entry)) return;
          // A client that went away needs no answer; a deadline that passed gets its 504 at once.
          if (isPrazoError(signal.reason, 'CANCELLED')) return;
          const at = clock.now();
          refuse(route, criticality, 'queue-expired', deadline.limitMs - at, at - entry.enqueuedAt, answer);
        },
      };
      if (signal.aborted) {
        refuse(route, criticality, 'expired', remainingMs, 0, answer);
        return;
      }
      signal.addEventListener('abort', entry.onAbort, { once: true });
      const evicted = queue.push(entry, o.maxQueue);
      if (evicted !== undefined) {
        leave(evicted);
        refuse(
          evicted.route,
          evicted.criticality,
          'shed',
          evicted.deadline.limitMs - now,
          now - evicted.enqueuedAt,
          evicted.refuse,
        );
      }
      // A slot may have been free with work waiting only if nothing drained it yet.
      if (inFlight < o.maxInFlight) drain(now);
    },
    countExpired(key, criticality) {
      table.route(key).countRefused('expired', criticality);
    },
    get inFlight() {
      return inFlight;
    },
    get queueLength() {
      return queue.length;
    },
    get overloaded() {
      return queue.overloaded;
    },
    options: Object.freeze({ ...o }),
    sojourn,
    routes: () => table.routes(),
    on(event, listener) {
      (listeners[event] as unknown[]).push(listener);
      return admission;
    },
    off(event, listener) {
      const list = listeners[event] as unknown[];
      const at = list.indexOf(listener);
      if (at !== -1) list.splice(at, 1);
      return admission;
    },
  };
  return admission;
}
