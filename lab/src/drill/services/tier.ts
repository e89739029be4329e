import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSlicedWindow, LatencyHistogram, type SlicedWindow } from 'prazo/latency';
import type { AttemptKind } from 'prazo/wire';
import { createServer } from '../../http-module.js';
import { createCheckoutSampling } from '../waterfall/checkout-sampling.js';
import { answerTrail } from '../waterfall/hop-trail.js';
import type { WaterfallSamples } from '../waterfall/sampler.js';
import { epochNow, TRAIL_HEADER } from '../waterfall/trail.js';
import {
  createNaiveDownstream,
  createNaiveOrderWriter,
  type Downstream,
  type DownstreamHooks,
  type OrderWriter,
} from './downstream.js';
import { errorCodeOf } from './error-body.js';
import { CHECKOUT_ID_HEADER } from './order-writes.js';
import { createPrazoDownstream, createPrazoOrderWriter, wrapPrazoHandler } from './prazo-downstream.js';
import { createSlotPool, type SlotPool } from './slot-pool.js';
import type { TierMeasurement, TierPolicy, TierSpec, TierStats } from './spec.js';

/** A running service of the chain. */
export interface TierService {
  readonly port: number;
  stats(): TierStats;
  /** What this service measured of its downstream while healthy (the warm-up), for calibration. */
  measured(): TierMeasurement;
  /** The Prometheus metrics of this service's client (text format; empty when it has none). */
  metrics(): Promise<string>;
  /** Forgets what was measured so far (the priming requests before the warm-up). */
  resetMeasurements(): void;
  /** Edge only: p99 of the whole supplier call by variant since the last call, in ms; then starts over. */
  takeCallP99(): Record<string, number>;
  /**
   * The shop only: the failing and the slowest successful /checkout sampled since the last call
   * (their deadline waterfalls); then starts over.
   */
  takeWaterfalls(): WaterfallSamples | null;
  /** Switches to the calibrated policy (prazo configuration only; the naive one keeps its settings). */
  configure(policy: TierPolicy): Promise<void>;
  close(): Promise<void>;
}

const LIVE_SLICES = 5;

/** Starts a service of the chain (gateway/shop, orders or inventory) on 127.0.0.1, port 0. */
export async function startTier(spec: TierSpec): Promise<TierService> {
  const pool: SlotPool | null = spec.shop ? createSlotPool(spec.shop.pool) : null;
  const served: Record<string, number> = {};
  let servedCount = 0;
  const attempts = { original: 0, retry: 0, hedge: 0 };
  const byVariant: TierStats['byVariant'] = {};
  let attemptFailures = 0;
  let calibrating = true;
  /** Edge only: duration of the whole supplier call (all attempts) by variant, since the last reset. */
  const callLatency = new Map<string, LatencyHistogram>();
  // The warm-up window feeds calibration through prazo's own healthy-slice selection; the live
  // window is the "measured p99" drawn against the configured timeout.
  const warmup: SlicedWindow = createSlicedWindow({ slices: 600, sliceMs: 1000 });
  const live: SlicedWindow = createSlicedWindow({ slices: LIVE_SLICES, sliceMs: 1000 });

  // The shop samples /checkout waterfalls; the other services answer with their trail.
  const sampling = spec.shop ? createCheckoutSampling(spec.config, spec.name) : null;
  const hooks: DownstreamHooks = {
    onAttempt(kind: AttemptKind, variant: string, durationMs: number, ok: boolean, trace) {
      trace?.attempts.push({ kind, endMs: epochNow(), durationMs, ok });
      attempts[kind]++;
      const v = byVariant[variant] ?? { original: 0, retry: 0, hedge: 0 };
      byVariant[variant] = v;
      v[kind]++;
      if (!ok) attemptFailures++;
      live.record(ok ? durationMs : undefined, !ok);
      if (calibrating) warmup.record(ok ? durationMs : undefined, !ok);
    },
  };
  let downstream: Downstream =
    spec.config === 'prazo'
      ? createPrazoDownstream(spec, null, hooks)
      : spec.edge && spec.peer
        ? // Loaded only when a peer runs: the quick drill needs none of the peers' packages.
          (await import('./peer-downstream.js')).createPeerDownstream(spec, spec.peer, hooks)
        : createNaiveDownstream(spec, hooks);
  // The edge of the naive and prazo columns writes the checkout's order after its stock read; a
  // peer's edge only reads (the write is not part of the peer comparison).
  let writer: OrderWriter | null = !spec.edge
    ? null
    : spec.config === 'prazo'
      ? createPrazoOrderWriter(spec, null)
      : spec.config === 'naive'
        ? createNaiveOrderWriter(spec)
        : null;
  const writes = { sent: 0, succeeded: 0, failed: {} as Record<string, number> };
  let checkouts = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const variant = url.searchParams.get('variant') ?? 'hedged';
    // When it got here and how far (epoch ms, -1 where it did not get): numbers, not an object, so
    // that the shop's hot path allocates nothing for the waterfall it rarely samples.
    const receivedMs = epochNow();
    let slotMs = -1;
    let release: (() => void) | undefined;
    try {
      if (pool) {
        const abandoned = new AbortController();
        const onClose = () => {
          if (!res.writableFinished) abandoned.abort();
        };
        req.once('close', onClose);
        const slot = await pool.acquire(abandoned.signal);
        req.off('close', onClose);
        slotMs = epochNow();
        if (typeof slot === 'string') {
          if (url.pathname === spec.path)
            sampling?.ended(req, variant, 503, { receivedMs, slotMs, callStartMs: -1, callEndMs: -1 }, null);
          reply(res, 503, { error: 'pool', reason: slot });
          return;
        }
        release = slot;
      }
      if (spec.shop && url.pathname === '/catalog') {
        await new Promise((resolve) => setTimeout(resolve, spec.shop!.catalogWorkMs));
        reply(res, 200, { items: 3 });
        return;
      }
      if (url.pathname !== spec.path) {
        reply(res, 404, { error: 'not found' });
        return;
      }
      // The shop opens the checkout: its id goes down the chain to the order write.
      if (spec.shop) req.headers[CHECKOUT_ID_HEADER] = `${spec.config}-${++checkouts}`;
      const query = variant === 'hedged' ? '' : `?variant=${encodeURIComponent(variant)}`;
      const callStartedAt = performance.now();
      let outcome = await downstream.call(`${spec.downstreamPath}${query}`, req, variant);
      const readMs = performance.now() - callStartedAt;
      const checkout = req.headers[CHECKOUT_ID_HEADER];
      if (writer !== null && outcome.status < 300 && typeof checkout === 'string') {
        writes.sent++;
        const written = await writer.write(checkout, req);
        if (written.status < 300) writes.succeeded++;
        else {
          const reason = `${written.status} ${errorCodeOf(written.body)}`;
          writes.failed[reason] = (writes.failed[reason] ?? 0) + 1;
          outcome = { ...outcome, status: written.status, body: written.body };
        }
      }
      const callEndMs = epochNow();
      const callStartMs = performance.timeOrigin + callStartedAt;
      // What the user got: prazo's adapter may have answered 504 at the deadline already.
      const status = res.headersSent ? res.statusCode : outcome.status;
      if (sampling) sampling.offer(req, variant, status, receivedMs, slotMs, callStartMs, callEndMs, outcome);
      else if (!res.headersSent)
        res.setHeader(
          TRAIL_HEADER,
          answerTrail(spec.name, spec.edge, req, { receivedMs, slotMs, callStartMs, callEndMs }, outcome),
        );
      if (spec.edge) {
        let histogram = callLatency.get(variant);
        if (!histogram) {
          histogram = new LatencyHistogram();
          callLatency.set(variant, histogram);
        }
        // The stock read alone: the edge's view of hedging is of the read (the write's hedge waits
        // for the first copy at the supplier, so it cannot shorten a slow write).
        histogram.record(readMs);
      }
      reply(res, outcome.status, outcome.body);
    } finally {
      release?.();
    }
  };

  const serve = spec.config === 'prazo' ? wrapPrazoHandler(handle, spec) : handle;
  const server: Server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    req.on('error', () => {});
    res.once('finish', () => {
      servedCount++;
      served[res.statusCode] = (served[res.statusCode] ?? 0) + 1;
    });
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    stats() {
      const merged = new LatencyHistogram();
      for (const slice of live.slices()) merged.merge(slice.histogram);
      const poolStats = pool?.stats();
      return {
        served: servedCount,
        servedByStatus: { ...served },
        attempts: { ...attempts },
        attemptFailures,
        liveP99Ms: merged.count > 0 ? merged.percentile(99) : Number.NaN,
        timeoutMs: downstream.timeoutMs(),
        byVariant: structuredClone(byVariant),
        writes: writer === null ? null : { ...writes, failed: { ...writes.failed } },
        pool:
          pool && poolStats
            ? {
                size: poolStats.size,
                inUse: poolStats.inUse,
                waiting: poolStats.waiting,
                peakInUse: pool.takePeak(),
                rejectedQueueFull: poolStats.rejectedQueueFull,
                rejectedTimeout: poolStats.rejectedTimeout,
              }
            : null,
      };
    },
    measured() {
      const { histogram } = warmup.healthy();
      const [p50Ms, p95Ms, p99Ms] =
        histogram.count > 0 ? histogram.percentiles([50, 95, 99]) : [Number.NaN, Number.NaN, Number.NaN];
      return { count: histogram.count, p50Ms: p50Ms!, p95Ms: p95Ms!, p99Ms: p99Ms! };
    },
    metrics: async () => (downstream.metrics ? downstream.metrics() : ''),
    resetMeasurements() {
      warmup.reset();
      live.reset();
      callLatency.clear();
      sampling?.reset();
    },
    takeWaterfalls: () => sampling?.take() ?? null,
    takeCallP99() {
      const result: Record<string, number> = {};
      for (const [variant, histogram] of callLatency) {
        if (histogram.count > 0) result[variant] = histogram.percentile(99);
      }
      callLatency.clear();
      return result;
    },
    async configure(policy) {
      calibrating = false;
      if (spec.config !== 'prazo') return;
      const previous = downstream;
      const next = createPrazoDownstream(spec, policy, hooks);
      await next.ready?.();
      downstream = next;
      // In-flight calls finish on the old client; its pools are closed once they have.
      void previous.close(true);
      if (writer !== null) {
        const previousWriter = writer;
        writer = createPrazoOrderWriter(spec, policy);
        void previousWriter.close(true);
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([downstream.close(), writer?.close()]);
    },
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
