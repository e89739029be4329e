import type { Channel } from 'node:diagnostics_channel';
import type { InstanceTransition } from '../balancer/instance-transition.js';
import type { ResolverError } from '../errors.js';
import type { AttemptPhase } from '../policy/classify.js';
import type { AttemptKind } from '../wire/attempt-header.js';
import type { ServerTimingProblem } from '../wire/server-timing.js';
import { channels } from './diagnostics.js';
import type { DeadlineLedger } from './ledger.js';
import type { PolicySnapshot } from './live-latency.js';

/** A call began (after its deadline was resolved). */
export interface RequestStartEvent {
  dependency: string;
  requestId: number;
  method: string;
  idempotent: boolean;
  /** Time left before the call's deadline, in ms. */
  remainingMs: number;
}

/** One attempt left for an instance. */
export interface AttemptStartEvent {
  dependency: string;
  requestId: number;
  /** 1-based attempt number within the call (hedges count). */
  attempt: number;
  kind: AttemptKind;
  /** The instance's origin. */
  instance: string;
}

/**
 * An attempt is about to be sent: its headers are final except for what listeners add. A listener
 * may append name/value pairs to `headers` (`headers.push(name, value)`) — how a tracer injects the
 * trace context into every attempt. Emitted only when someone listens.
 */
export interface AttemptHeadersEvent {
  dependency: string;
  requestId: number;
  /** 1-based attempt number within the call (hedges count). */
  attempt: number;
  kind: AttemptKind;
  method: string;
  /** The instance's origin. */
  instance: string;
  /** Path and query sent to the instance. */
  path: string;
  /** The attempt's headers as flat name/value pairs; append only. */
  headers: string[];
}

/** One attempt ended. */
export interface AttemptEndEvent {
  dependency: string;
  requestId: number;
  attempt: number;
  kind: AttemptKind;
  instance: string;
  /** From send to response headers (or failure), in ms. */
  durationMs: number;
  /** `success`: a status below 400 or a final one; `failure`: an error or a retryable status; `aborted`: prazo cut it (hedge lost, caller cancelled, closed). */
  outcome: 'success' | 'failure' | 'aborted';
  status?: number;
  phase?: AttemptPhase;
  /** Set when the attempt ran out of time. */
  timeout?: 'connect' | 'read';
  /** `code` of the error, when the attempt failed with one. */
  errorCode?: string;
  /** Whether this attempt's answer is the one the call went on with (false for a losing hedge copy). */
  won: boolean;
  /** Time left of the call's deadline when the attempt was sent, in ms (set by prazo's engine). */
  leftMs?: number;
  /** From send until a connection took the request, in ms (when the transport says so). */
  connectMs?: number;
}

/** A retry was granted and will be sent after `delayMs`. */
export interface RetryEvent {
  dependency: string;
  requestId: number;
  /** Number of the attempt that failed. */
  attempt: number;
  delayMs: number;
  /** Classification reason of the failure (`status-503`, `connect-refused` …). */
  reason: string;
  anotherInstance: boolean;
}

/** A hedge copy was sent. */
export interface HedgeEvent {
  dependency: string;
  requestId: number;
  /** Delay after the first copy, in ms. */
  afterMs: number;
}

/** An extra attempt (retry or hedge) was refused by the retry budget. */
export interface BudgetExhaustedEvent {
  dependency: string;
  requestId: number;
  purpose: 'retry' | 'hedge';
}

/**
 * The remaining deadline cannot hold the dependency's p99: the call was refused before any attempt
 * (`beforeAttempt: true`), or a retry was not sent (`beforeAttempt: false`).
 */
export interface FastFailEvent {
  dependency: string;
  requestId: number;
  remainingMs: number;
  requiredMs: number;
  /**
   * True when the call never reached the dependency: it is then counted by the retry budget as
   * refused, not as an original, and by the metrics as a refused request.
   */
  beforeAttempt: boolean;
}

/**
 * A call was refused locally by an overload protection, before any attempt: the adaptive
 * concurrency limit (`reason: 'concurrency'`, error `CONCURRENCY_LIMITED`) or adaptive throttling
 * (`reason: 'throttle'`, error `THROTTLED`). The retry budget counts it as refused, not as an original.
 */
export type LimitedEvent =
  | {
      dependency: string;
      requestId: number;
      reason: 'concurrency';
      /** The concurrency limit in force. */
      limit: number;
      /** Calls waiting for a slot, this one excluded. */
      queued: number;
      /** Time that was left before the deadline, in ms. */
      remainingMs: number;
    }
  | {
      dependency: string;
      requestId: number;
      reason: 'throttle';
      /** The local rejection probability in force. */
      probability: number;
      remainingMs: number;
    };

/** The adaptive concurrency limit changed (at most once per sample window). */
export interface ConcurrencyLimitEvent {
  dependency: string;
  /** The new limit, calls in flight. */
  limit: number;
}

/** A call ended (the caller got a response or an error). */
export interface RequestEndEvent {
  dependency: string;
  requestId: number;
  outcome: 'success' | 'failure';
  status?: number;
  /** prazo error code when the call failed. */
  code?: string;
  durationMs: number;
  /** Attempts sent, hedges included. */
  attempts: number;
  /**
   * Where the call's time went (the same object as the response's or the error's `ledger`); set by
   * prazo's engine (absent from events replayed from elsewhere).
   */
  ledger?: DeadlineLedger;
}

/**
 * What an answer's `Server-Timing` said could not (all) be read: the part ignored, and why. Emitted
 * once per answer, when its timing is first read (by the ledger, or by a server adapter passing it up).
 */
export interface ServerTimingIgnoredEvent {
  dependency: string;
  /** Number of the attempt that was answered. */
  attempt: number;
  /** Origin of the instance that answered. */
  instance: string;
  reason: ServerTimingProblem;
}

/**
 * An attempt that was never written (connect refused, connect timeout, aborted while waiting for a
 * pool connection) is sent again to another instance without using one of the caller's attempts.
 */
export interface RequeueEvent {
  dependency: string;
  requestId: number;
  /** Number of the attempt that was never written. */
  attempt: number;
  /** Origin of the instance it could not reach. */
  instance: string;
  /** Classification reason (`connect-refused`, `connect-timeout` …). */
  reason: string;
  /** Requeues of this call so far, this one included. */
  requeues: number;
}

/**
 * An instance changed state (see docs/instances.md): emitted as `instance-ejected`,
 * `instance-returned`, `instance-probing`, `instance-down`, `instance-up`, `instance-added`,
 * `instance-removed` or `instance-drained`, after the call that caused it has moved on.
 */
export type InstanceEvent = Omit<InstanceTransition, 'origin' | 'index'> & {
  dependency: string;
  /** The instance's origin. */
  instance: string;
};

/** The policy in force changed (live p95/p99, or a new calibration). */
export interface PolicyEvent {
  dependency: string;
  policy: PolicySnapshot;
}

/**
 * The resolver of `origins` answered a set that differs from the one in force (the first answer
 * included): added instances enter in slow start, removed ones finish their calls and close.
 */
export interface MembershipChangedEvent {
  dependency: string;
  /** The set now in force. */
  origins: readonly string[];
  added: readonly string[];
  removed: readonly string[];
}

/**
 * The resolver of `origins` failed (threw, rejected, timed out, answered nothing or something
 * malformed): the last good set stays in force. Emitted on every failed resolution.
 */
export interface MembershipErrorEvent {
  dependency: string;
  /** `RESOLVER_FAILED`, with what the resolver did in `cause`. */
  error: ResolverError;
  /** The set kept in force (empty while no resolution has succeeded yet). */
  origins: readonly string[];
  /** Failed resolutions in a row, this one included. */
  consecutiveFailures: number;
}

/** Every event a dependency emits, by name. */
export interface DependencyEvents {
  'request-start': RequestStartEvent;
  'attempt-headers': AttemptHeadersEvent;
  'attempt-start': AttemptStartEvent;
  'attempt-end': AttemptEndEvent;
  retry: RetryEvent;
  hedge: HedgeEvent;
  'budget-exhausted': BudgetExhaustedEvent;
  'fast-fail': FastFailEvent;
  'request-end': RequestEndEvent;
  limited: LimitedEvent;
  'concurrency-limit': ConcurrencyLimitEvent;
  policy: PolicyEvent;
  requeue: RequeueEvent;
  /** An answer's `Server-Timing` was (partly) ignored when the ledger read it (docs/deadlines.md). */
  'server-timing-ignored': ServerTimingIgnoredEvent;
  /** Too many failures in a row, or a failure ratio far above its peers' (or a failed probe). */
  'instance-ejected': InstanceEvent;
  /** Its ejection ended: the next first attempt is its single probe. */
  'instance-probing': InstanceEvent;
  /** Its probe succeeded: it is back, in slow start. */
  'instance-returned': InstanceEvent;
  /** Its connect failed: passed over for `balancer.connectDownMs`. */
  'instance-down': InstanceEvent;
  /** It answered again, or its connect-down period ended. */
  'instance-up': InstanceEvent;
  /** It joined the fleet (membership), in slow start. */
  'instance-added': InstanceEvent;
  /** It left the fleet: no new calls; it drains the calls in flight. */
  'instance-removed': InstanceEvent;
  /** The last call of a removed instance finished. */
  'instance-drained': InstanceEvent;
  'membership-changed': MembershipChangedEvent;
  'membership-error': MembershipErrorEvent;
}

/** Name of a dependency event. */
export type DependencyEventName = keyof DependencyEvents;

/** A listener of event `K`. */
export type DependencyListener<K extends DependencyEventName> = (event: DependencyEvents[K]) => void;

/** The listeners of one event and its diagnostics channel. */
export class EventSlot {
  readonly listeners: Array<(event: never) => void> = [];
  readonly channel: Channel;

  constructor(channel: Channel) {
    this.channel = channel;
  }

  /** Whether anyone listens: a listener, or a subscriber of the diagnostics channel. */
  get active(): boolean {
    return this.listeners.length !== 0 || this.channel.hasSubscribers;
  }
}

/**
 * A small typed emitter. Steps ask {@link EventHub.has} before building a payload, so an event
 * nobody listens to costs one lookup. A listener that throws is reported as a process warning and
 * never breaks the call.
 */
export class EventHub {
  // A Map rather than an object keyed by event name: `has()` runs several times a call with a
  // different name each time, and a keyed read of an object property by a varying name costs
  // twice a Map lookup (≈ 20 ns against 9).
  readonly #slots: ReadonlyMap<DependencyEventName, EventSlot> = slotsOf(channels);

  /** Whether anyone listens to `name`: a listener, or a subscriber of its diagnostics channel. */
  has(name: DependencyEventName): boolean {
    return this.#slots.get(name)!.active;
  }

  /**
   * The slot of `name`, for a step that asks on every call whether anyone listens to it: looked up
   * once, at setup, `slot.active` costs a few ns where `has()` looks the name up each time.
   */
  slot(name: DependencyEventName): EventSlot {
    return this.#slots.get(name)!;
  }

  on<K extends DependencyEventName>(name: K, listener: DependencyListener<K>): void {
    const slot = this.#slots.get(name);
    if (slot === undefined) throw new TypeError(`Unknown prazo event "${String(name)}".`);
    if (typeof listener !== 'function') throw new TypeError('A prazo event listener must be a function.');
    slot.listeners.push(listener as (event: never) => void);
  }

  off<K extends DependencyEventName>(name: K, listener: DependencyListener<K>): void {
    const list = this.#slots.get(name)?.listeners;
    if (list === undefined) return;
    const i = list.indexOf(listener as (event: never) => void);
    if (i !== -1) list.splice(i, 1);
  }

  emit<K extends DependencyEventName>(name: K, event: DependencyEvents[K]): void {
    const slot = this.#slots.get(name)!;
    const list = slot.listeners as Array<DependencyListener<K>>;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(event);
      } catch (error) {
        process.emitWarning(`A listener of the prazo "${name}" event threw: ${String(error)}`);
      }
    }
    const channel = slot.channel;
    if (channel.hasSubscribers) channel.publish(event);
  }

  /** Removes every listener. */
  clear(): void {
    for (const slot of this.#slots.values()) slot.listeners.length = 0;
  }
}

/** One slot per event, each with its channel: `byName` does not compile if an event has none. */
function slotsOf(
  byName: { readonly [K in DependencyEventName]: Channel },
): Map<DependencyEventName, EventSlot> {
  const slots = new Map<DependencyEventName, EventSlot>();
  for (const name of Object.keys(byName) as DependencyEventName[])
    slots.set(name, new EventSlot(byName[name]));
  return slots;
}
