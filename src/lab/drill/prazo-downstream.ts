import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { callWithDeadline } from '../../deadline/call-with-deadline.js';
import type { Deadline } from '../../deadline/deadline.js';
import { createRetryBudget } from '../../policy/retry-budget.js';
import { type DeadlineIncomingMessage, withDeadlineHandler } from '../../server/http.js';
import { ATTEMPT_HEADER } from '../attempt-header.js';
import { type Downstream, type DownstreamHooks, failure } from './downstream.js';
import type { CallResult } from './naive-caller.js';
import type { TierPolicy, TierSpec } from './service-spec.js';

/** A request handler of a tier. */
export type TierHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The server side of a prazo tier: every request runs under its deadline — the user's
 * `x-deadline-epoch-ms` capped at the service's own limit (the article's 1900 ms at the gateway), or
 * that limit when the header is missing. A request that arrives expired is answered 504 at once.
 */
export function wrapPrazoHandler(handler: TierHandler, spec: TierSpec): TierHandler {
  return withDeadlineHandler(handler, { defaultMs: spec.deadline.defaultMs, maxMs: spec.deadline.maxMs });
}

const deadlineOf = (incoming: IncomingMessage): Deadline => (incoming as DeadlineIncomingMessage).deadline;

/**
 * An internal hop of the prazo configuration (gateway → orders, orders → inventory): one attempt,
 * bounded by the propagated deadline, and refused before the call when the time left cannot hold the
 * next hop's p99 (before calibration, the nominal p99 the drill starts from).
 */
function createHopDownstream(spec: TierSpec, p99Ms: number, hooks: DownstreamHooks): Downstream {
  const pool = new Pool(spec.downstream[0]!, { connections: 256, pipelining: 1 });
  return {
    async call(path, incoming, variant) {
      const startedAt = performance.now();
      try {
        const result = await callWithDeadline(deadlineOf(incoming), {
          name: spec.downstreamName,
          p99Ms,
          run: async ({ signal, headers }) => {
            const response = await pool.request({ path, method: 'GET', headers, signal });
            return { status: response.statusCode, body: await response.body.text() };
          },
        });
        hooks.onAttempt('original', variant, performance.now() - startedAt, result.status < 500);
        return result;
      } catch (error) {
        hooks.onAttempt('original', variant, performance.now() - startedAt, false);
        return failure(error);
      }
    },
    timeoutMs: () => spec.deadline.maxMs,
    close: (graceful) => (graceful ? pool.close() : pool.destroy()),
  };
}

/**
 * INTERIM edge until prazo's client (`dependency()`) lands: calibrated per-attempt timeout, attempts,
 * a retry budget and the deadline; no hedging.
 */
function createEdgeDownstream(spec: TierSpec, policy: TierPolicy, hooks: DownstreamHooks): Downstream {
  const budget = createRetryBudget({ windowMs: policy.budgetWindowMs });
  const pools = spec.downstream.map((origin) => new Pool(origin, { connections: 256, pipelining: 1 }));
  let next = 0;
  return {
    async call(path, incoming, variant) {
      const deadline = deadlineOf(incoming);
      budget.recordOriginal();
      let last: unknown;
      for (let attempt = 1; attempt <= policy.attempts; attempt++) {
        if (attempt > 1 && !budget.tryConsume()) break;
        const kind = attempt === 1 ? 'original' : 'retry';
        const pool = pools[next++ % pools.length]!;
        const startedAt = performance.now();
        try {
          const result = await callWithDeadline(deadline, {
            name: 'supplier',
            p99Ms: policy.p99Ms,
            run: async ({ signal, headers }) => {
              const response = await pool.request({
                path,
                method: 'GET',
                headers: { ...headers, [ATTEMPT_HEADER]: `${attempt};kind=${kind}` },
                signal: AbortSignal.any([signal, AbortSignal.timeout(policy.readMs)]),
              });
              return { status: response.statusCode, body: await response.body.text() };
            },
          });
          hooks.onAttempt(kind, variant, performance.now() - startedAt, result.status < 500);
          if (result.status < 500) return result;
          last = result;
        } catch (error) {
          hooks.onAttempt(kind, variant, performance.now() - startedAt, false);
          last = error;
          if (String((error as { code?: unknown } | null)?.code).startsWith('DEADLINE')) break;
        }
      }
      return last && typeof last === 'object' && 'status' in last ? (last as CallResult) : failure(last);
    },
    timeoutMs: () => policy.readMs,
    async close(graceful) {
      await Promise.all(pools.map((pool) => (graceful ? pool.close() : pool.destroy())));
    },
  };
}

/** The prazo configuration's client for a tier: before calibration (warm-up), one deadline-bounded attempt. */
export function createPrazoDownstream(
  spec: TierSpec,
  policy: TierPolicy | null,
  hooks: DownstreamHooks,
): Downstream {
  if (policy === null || !spec.edge)
    return createHopDownstream(spec, policy?.p99Ms ?? spec.startP99Ms, hooks);
  return createEdgeDownstream(spec, policy, hooks);
}
