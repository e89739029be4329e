import type { IncomingMessage } from 'node:http';
import type { AttemptKind } from 'prazo/wire';
import { DEADLINE_HEADER } from 'prazo/wire';
import { type CallResult, createNaiveCaller, type NaiveCaller } from '../peers/naive-caller.js';
import { UpstreamStatusError } from '../peers/settings.js';
import { type AttemptTrace, type TrailSpan, traceSpans } from '../waterfall/trail.js';
import { CHECKOUT_ID_HEADER, ORDER_WRITE_PATH } from './order-writes.js';
import type { TierSpec } from './spec.js';

/** Callbacks a tier uses to count what its client does. */
export interface DownstreamHooks {
  /** `trace`: the call's trace, when the call keeps one (the edge, for the drill's waterfall). */
  onAttempt(kind: AttemptKind, variant: string, durationMs: number, ok: boolean, trace?: AttemptTrace): void;
}

/** What a service's call to the next one returned, with what it says of where the time went. */
export interface TierCallResult extends CallResult {
  /** The edge: its client's own spans (prazo's ledger, or the attempts a peer's client reported). */
  spans?: TrailSpan[];
}

/** How a service of the chain calls the next one. */
export interface Downstream {
  /** Calls `path` on behalf of the incoming request; never rejects (failures become a 5xx result). */
  call(path: string, incoming: IncomingMessage, variant: string): Promise<TierCallResult>;
  /** The per-attempt timeout in force, in ms. */
  timeoutMs(): number;
  /** The client's own Prometheus metrics (text format), when it publishes any. */
  metrics?(): Promise<string>;
  /** Resolves once the client is fully set up (its metrics attached), when that takes a moment. */
  ready?(): Promise<void>;
  /** Closes the client: at once, or once the calls in flight have finished (`graceful`). */
  close(graceful?: boolean): Promise<void>;
}

/**
 * The naive configuration's client: fixed timeout, blind retries at the edge, and no deadline. The
 * user's deadline header is passed along untouched, like a trace header, only so the supplier double
 * can count the requests that arrive after the user has gone; no service of this configuration reads it.
 */
export function createNaiveDownstream(spec: TierSpec, hooks: DownstreamHooks): Downstream {
  const caller = createNaiveCaller({
    name: spec.downstreamName,
    origins: spec.downstream,
    timeoutMs: spec.naive.timeoutMs,
    attempts: spec.edge ? spec.naive.attempts : 1,
    onAttempt: (kind, durationMs, ok, variant, trace) =>
      hooks.onAttempt(kind, variant, durationMs, ok, trace),
  });
  return callerDownstream(caller, spec.naive.timeoutMs, spec.edge ? spec.name : null);
}

/**
 * A downstream over a client that knows nothing of deadlines (naive, and the peers): the user's
 * deadline header is passed along untouched, only so the supplier double can count late arrivals.
 * At the edge (`traceAs`: the service's name) each call keeps a trace of the attempts its client
 * reports, for the drill's waterfall.
 */
export function callerDownstream(
  caller: NaiveCaller,
  timeoutMs: number,
  traceAs: string | null = null,
): Downstream {
  return {
    async call(path, incoming, variant) {
      const headers: Record<string, string> = {};
      const deadline = incoming.headers[DEADLINE_HEADER];
      if (typeof deadline === 'string') headers[DEADLINE_HEADER] = deadline;
      const checkout = incoming.headers[CHECKOUT_ID_HEADER];
      if (typeof checkout === 'string') headers[CHECKOUT_ID_HEADER] = checkout;
      const trace: AttemptTrace | undefined = traceAs === null ? undefined : { attempts: [] };
      let result: TierCallResult;
      try {
        result = await caller.call(path, headers, variant, trace);
      } catch (error) {
        result = failure(error);
      }
      // A new object: a client may answer with a shared, frozen one (opossum's fallback).
      return trace === undefined || traceAs === null
        ? result
        : { ...result, spans: traceSpans(traceAs, trace) };
    },
    timeoutMs: () => timeoutMs,
    close: (graceful) => caller.close(graceful),
  };
}

/**
 * The edge's order write: after a checkout's stock read succeeded, `POST /orders` to the supplier
 * with the checkout's id in the body (see `order-writes.ts`).
 */
export interface OrderWriter {
  /** Writes the order of `checkout` on behalf of the incoming request; never rejects (failures become a 5xx). */
  write(checkout: string, incoming: IncomingMessage): Promise<CallResult>;
  close(graceful?: boolean): Promise<void>;
}

/** The body of the order write for `checkout`. */
export function orderWriteBody(checkout: string): string {
  return JSON.stringify({ checkout });
}

/**
 * The naive column's order write: the naive client (30 s timeout, 3 attempts) POSTs the order and
 * retries it blindly on a 5xx, a reset or a timeout — with no idempotency key, so an answer lost
 * after the supplier wrote makes the retry create the order again. Its attempts are not the reads'
 * (they count in no attempt figure of the edge).
 */
export function createNaiveOrderWriter(spec: TierSpec): OrderWriter {
  const caller = createNaiveCaller({
    name: `${spec.downstreamName}-orders`,
    origins: spec.downstream,
    timeoutMs: spec.naive.timeoutMs,
    attempts: spec.naive.attempts,
  });
  return {
    async write(checkout, incoming) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const deadline = incoming.headers[DEADLINE_HEADER];
      if (typeof deadline === 'string') headers[DEADLINE_HEADER] = deadline;
      try {
        return await caller.call(ORDER_WRITE_PATH, headers, '', undefined, orderWriteBody(checkout));
      } catch (error) {
        return failure(error);
      }
    },
    close: (graceful) => caller.close(graceful),
  };
}

/** Maps a client error to what a service answers its own caller. */
export function failure(error: unknown): CallResult {
  // A peer's policies need a 5xx thrown to count it; the caller above sees the answer itself.
  if (error instanceof UpstreamStatusError) return { status: error.status, body: error.body };
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  const timedOut =
    code === 'DEADLINE_EXCEEDED' ||
    code === 'DEADLINE_INSUFFICIENT' ||
    code === 'READ_TIMEOUT' ||
    code === 'CONNECT_TIMEOUT' ||
    name === 'AbortError';
  return {
    status: timedOut ? 504 : 502,
    body: JSON.stringify({ error: typeof code === 'string' ? code : String(name ?? 'error') }),
  };
}
