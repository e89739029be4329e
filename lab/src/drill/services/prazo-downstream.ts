import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deadline, DeadlineLedger, Dependency } from 'prazo';
import { callWithDeadline, dependency } from 'prazo';
import { type DeadlineIncomingMessage, withDeadlineHandler } from 'prazo/http';
import { createRetryBudget } from 'prazo/policy';
import { undici } from '../../undici.js';
import { ledgerSpans } from '../waterfall/ledger-spans.js';
import { epochNow, TRAIL_HEADER } from '../waterfall/trail.js';
import {
  type Downstream,
  type DownstreamHooks,
  failure,
  type OrderWriter,
  orderWriteBody,
} from './downstream.js';
import { CHECKOUT_ID_HEADER, ORDER_WRITE_PATH } from './order-writes.js';
import type { TierPolicy, TierSpec } from './spec.js';

/** A request handler of a tier. */
export type TierHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The server side of a prazo tier: every request runs under its deadline — the user's
 * `x-deadline-epoch-ms` capped at the service's own limit (the article's 1900 ms at the gateway), or
 * that limit when the header is missing. A request that arrives expired is answered 504 at once.
 * The drill's load driver and tiers are one trust domain on loopback: each tier trusts its caller's
 * deadline and criticality (`trust: 'all'`), as services behind an edge do.
 */
export function wrapPrazoHandler(handler: TierHandler, spec: TierSpec): TierHandler {
  return withDeadlineHandler(handler, {
    defaultMs: spec.deadline.defaultMs,
    maxMs: spec.deadline.maxMs,
    trust: 'all',
  });
}

const deadlineOf = (incoming: IncomingMessage): Deadline => (incoming as DeadlineIncomingMessage).deadline;

/**
 * An internal hop of the prazo configuration (gateway → orders, orders → inventory): one attempt,
 * bounded by the propagated deadline, and refused before the call when the time left cannot hold the
 * next hop's p99. The edge uses it too until warm-up has been measured, over the supplier's instances
 * in turn (each has a third of the capacity the checkouts need).
 */
function createHopDownstream(spec: TierSpec, p99Ms: number, hooks: DownstreamHooks): Downstream {
  const pools = spec.downstream.map((origin) => new undici.Pool(origin, { connections: 256, pipelining: 1 }));
  let next = 0;
  return {
    async call(path, incoming, variant) {
      const pool = pools[next++ % pools.length]!;
      const startedAt = performance.now();
      try {
        const result = await callWithDeadline(deadlineOf(incoming), {
          name: spec.downstreamName,
          p99Ms,
          run: async ({ signal, headers }) => {
            const checkout = incoming.headers[CHECKOUT_ID_HEADER];
            const sent =
              typeof checkout === 'string' ? { ...headers, [CHECKOUT_ID_HEADER]: checkout } : headers;
            const response = await pool.request({ path, method: 'GET', headers: sent, signal });
            return {
              status: response.statusCode,
              body: await response.body.text(),
              trail: response.headers[TRAIL_HEADER],
            };
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
    close: async (graceful) => {
      await Promise.all(pools.map((pool) => (graceful ? pool.close() : pool.destroy())));
    },
  };
}

/**
 * The overload protections of the prazo column's edge client: what docs/overload.md recommends for
 * production on a dependency that queues (the adaptive concurrency limit, and a last attempt that
 * waits for its answer rather than abandoning work nothing would be sent in place of). The drill's
 * supplier does not shed load with 429/503 — its 503s are the fault being injected — so adaptive
 * throttling, recommended for dependencies that do, is not part of it. One setting, for every phase.
 * The limit's floor is sized to the edge's traffic, as docs/overload.md advises: 50 checkouts/s at a
 * healthy ≈ 70 ms keep 3.5 calls in flight (Little's law), ≈ 6 with the sick/slow phase's instance
 * 150 ms away; a floor of 4 queues healthy calls there (p50 1.2 s and 96.25 % in one run of three).
 */
export const PRAZO_OVERLOAD = Object.freeze({
  concurrency: Object.freeze({ minLimit: 8 }),
  lastAttempt: 'deadline' as const,
});

/**
 * The edge of the prazo configuration (inventory → supplier): prazo's client with the policy calibrated
 * from warm-up, a retry budget, deadline propagation and a hedge at the live p95 — one client, as a
 * service has one per dependency: one concurrency limit, one live latency, one budget for all its
 * calls. The `unhedged` variant's calls turn hedging off for themselves (`hedge: false`); everything
 * else, their retries included, is the same client's.
 */
function createEdgeDownstream(spec: TierSpec, policy: TierPolicy, hooks: DownstreamHooks): Downstream {
  const client = dependency({
    name: 'supplier',
    origins: spec.downstream,
    latency: { p99Ms: policy.p99Ms, p95Ms: policy.p95Ms },
    userDeadlineMs: policy.userDeadlineMs,
    attempts: policy.attempts,
    connections: 256,
    retryBudget: createRetryBudget({ windowMs: policy.budgetWindowMs }),
    hedge: { at: 'p95' },
    ...PRAZO_OVERLOAD,
  });
  // Each call's variant, read from its first attempt's path (the unhedged variant's carries
  // `?variant=unhedged`), so that every attempt — a losing copy's too, which may end after its call
  // — is counted for its variant. Bounded: calls live a deadline, a few hundred at a time.
  const variants = new Map<number, string>();
  client.on('attempt-headers', (event) => {
    if (event.attempt !== 1) return;
    variants.set(event.requestId, event.path.includes('variant=unhedged') ? 'unhedged' : 'hedged');
    if (variants.size > 4_096) variants.delete(variants.keys().next().value!);
  });
  client.on('attempt-end', (event) => {
    const variant = variants.get(event.requestId) ?? 'hedged';
    hooks.onAttempt(event.kind, variant, event.durationMs, event.outcome === 'success');
  });
  const exporter = exportMetrics([client]);
  return {
    async call(path, incoming, variant) {
      // The call's deadline ledger, laid out from here, is the edge's part of the drill's waterfall.
      const startedMs = epochNow();
      try {
        const response = await client.request({
          path,
          deadline: deadlineOf(incoming),
          hedge: variant !== 'unhedged',
        });
        const body = await response.body.text();
        return { status: response.status, body, spans: ledgerSpans(spec.name, response.ledger, startedMs) };
      } catch (error) {
        const result = failure(error);
        const { ledger, code } = (error ?? {}) as { ledger?: DeadlineLedger; code?: unknown };
        if (ledger === undefined) return result;
        const spans = ledgerSpans(spec.name, ledger, startedMs, typeof code === 'string' ? code : 'error');
        return { ...result, spans };
      }
    },
    timeoutMs: () => client.policy().readMs,
    async ready() {
      await exporter;
    },
    async metrics() {
      const exported = await exporter;
      return exported === null ? '' : exported.registry.metrics();
    },
    async close() {
      (await exporter)?.detach();
      await client.close();
    },
  };
}

/**
 * The prazo column's order write: prazo's client with `idempotencyKey: 'auto'` — one key per checkout's
 * write, sent on every attempt and hedge — so the POST is retried after a read timeout or a reset and
 * hedged, under its own retry budget and the propagated deadline; the supplier's idempotency layer
 * runs it once. Hedged and retried on any instance only on the column's Redis (one store for the
 * fleet); without one (`redis-server` not installed), each instance keeps its own keys, so a write
 * is not hedged and its retries go back to the instance that may have run it (`idempotencyScope`). No concurrency limit (see below); `lastAttempt: 'deadline'` as the reads. Until warm-up has been measured (`policy` null) it uses the nominal p99 the hops
 * start with and the attempts of the naive settings, held to the deadline.
 */
export function createPrazoOrderWriter(spec: TierSpec, policy: TierPolicy | null): OrderWriter {
  const p99Ms = policy?.p99Ms ?? spec.startP99Ms;
  const client = dependency({
    name: `${spec.downstreamName}-orders`,
    origins: spec.downstream,
    latency: { p99Ms, p95Ms: policy?.p95Ms ?? p99Ms / 2 },
    userDeadlineMs: policy?.userDeadlineMs ?? spec.deadline.maxMs,
    attempts: policy?.attempts ?? spec.naive.attempts,
    connections: 256,
    retryBudget: createRetryBudget(policy ? { windowMs: policy.budgetWindowMs } : {}),
    hedge: { at: 'p95' },
    idempotencyKey: 'auto',
    // One Redis for the fleet: a copy may go to any instance; a store per instance: a write's
    // retries go back to the instance that may have run it, and it is never hedged.
    idempotencyScope: spec.orderKeys ?? 'instance',
    // The write holds no worker at the supplier (it does not queue there): an adaptive concurrency
    // limit would protect nothing and queue writes behind the tail's slow ones. The last attempt
    // still waits for its answer rather than abandoning a write that is running.
    lastAttempt: PRAZO_OVERLOAD.lastAttempt,
  });
  // `close()` aborts the calls in flight: a graceful close (the switch to the calibrated policy)
  // waits for the writes under way first.
  const inFlight = new Set<Promise<unknown>>();
  const write = async (checkout: string, incoming: IncomingMessage) => {
    try {
      const response = await client.request({
        method: 'POST',
        path: ORDER_WRITE_PATH,
        headers: { 'content-type': 'application/json' },
        body: orderWriteBody(checkout),
        deadline: deadlineOf(incoming),
      });
      return { status: response.status, body: await response.body.text() };
    } catch (error) {
      return failure(error);
    }
  };
  return {
    write(checkout, incoming) {
      const call = write(checkout, incoming);
      inFlight.add(call);
      void call.finally(() => inFlight.delete(call));
      return call;
    },
    async close(graceful) {
      if (graceful) await Promise.all(inFlight);
      await client.close();
    },
  };
}

/**
 * The edge clients' own metrics, through `prazo/prometheus` on a registry of their own: what the
 * dashboard and the alert rules read in production. Null when prom-client (an optional peer) is not
 * installed.
 */
async function exportMetrics(
  clients: Dependency[],
): Promise<{ registry: import('prom-client').Registry; detach(): void } | null> {
  try {
    const [{ Registry }, { instrument }] = await Promise.all([
      import('prom-client'),
      import('prazo/prometheus'),
    ]);
    const registry = new Registry();
    const handle = instrument(clients, { registry });
    return { registry, detach: () => handle.detach() };
  } catch {
    return null;
  }
}

/**
 * The prazo configuration's client for a tier. Internal hops: one deadline-bounded attempt (with the
 * nominal p99 for the pre-call check until warm-up is measured). The edge: prazo's client, calibrated
 * from warm-up; during warm-up itself, one deadline-bounded attempt that measures.
 */
export function createPrazoDownstream(
  spec: TierSpec,
  policy: TierPolicy | null,
  hooks: DownstreamHooks,
): Downstream {
  if (policy === null || !spec.edge)
    return createHopDownstream(spec, policy?.p99Ms ?? spec.startP99Ms, hooks);
  return createEdgeDownstream(spec, policy, hooks);
}
