import type { DrillContext } from '../run-drill.js';

/** The drill's Prometheus metrics (prom-client registry). */
export interface DrillMetrics {
  readonly contentType: string;
  /** Refreshes the gauges from the drill's latest sample. */
  update(context: DrillContext): void;
  text(): Promise<string>;
}

/**
 * Creates the drill's metrics on a fresh prom-client registry, or returns null when prom-client is
 * not installed (it is an optional peer of prazo). Names follow prazo's conventions: `prazo_` prefix,
 * base units, `config` label (`naive`, `prazo`, and with `--peers` the peers).
 */
export async function createDrillMetrics(): Promise<DrillMetrics | null> {
  let client: typeof import('prom-client');
  try {
    client = await import('prom-client');
  } catch {
    return null;
  }
  const registry = new client.Registry();
  const gauge = (name: string, help: string, labelNames: string[] = ['config']) =>
    new client.Gauge({ name, help, labelNames, registers: [registry] });
  const pool = gauge('prazo_drill_pool_in_use', 'Slots of the shop pool in use.');
  const poolPeak = gauge('prazo_drill_pool_peak', 'Peak slots in use during the last sample interval.');
  const success = gauge(
    'prazo_drill_route_success_ratio',
    'Share of user requests that succeeded in the last sample interval.',
    ['config', 'route'],
  );
  const supplier = gauge(
    'prazo_drill_supplier_requests',
    'Requests the supplier received since the drill started, by kind.',
    ['config', 'kind'],
  );
  const ratio = gauge(
    'prazo_drill_retry_ratio',
    'Retries and hedges over originals at the supplier, over the alert window.',
  );
  const perInstance = gauge(
    'prazo_drill_supplier_instance_requests',
    'Requests each supplier instance received since the drill started (instance: 0 sick, 1 slow, 2 healthy in the fleet phase).',
    ['config', 'instance'],
  );
  const afterDeadline = gauge(
    'prazo_drill_supplier_after_deadline',
    'Supplier requests that arrived after the user deadline, since start.',
  );
  const timeout = gauge('prazo_drill_edge_timeout_seconds', 'Per-attempt timeout configured at the edge.');
  const p99 = gauge('prazo_drill_supplier_p99_seconds', 'Live p99 of supplier calls measured at the edge.');
  return {
    contentType: registry.contentType,
    update(context) {
      for (const config of context.recorder.configs) {
        const samples = context.recorder.samples(config);
        const last = samples[samples.length - 1];
        if (!last) continue;
        pool.set({ config }, last.poolInUse);
        poolPeak.set({ config }, last.poolPeak);
        const share = (ok: number, failed: number) => (ok + failed > 0 ? ok / (ok + failed) : 1);
        success.set({ config, route: 'checkout' }, share(last.checkoutOk, last.checkoutFailed));
        success.set({ config, route: 'catalog' }, share(last.catalogOk, last.catalogFailed));
        let originals = 0;
        let retries = 0;
        let hedges = 0;
        let late = 0;
        const byInstance: number[] = [];
        for (const s of samples) {
          s.instanceRequests.forEach((n, i) => {
            byInstance[i] = (byInstance[i] ?? 0) + n;
          });
          originals += s.originals;
          retries += s.retries;
          hedges += s.hedges;
          late += s.afterDeadline;
        }
        supplier.set({ config, kind: 'original' }, originals);
        supplier.set({ config, kind: 'retry' }, retries);
        supplier.set({ config, kind: 'hedge' }, hedges);
        afterDeadline.set({ config }, late);
        byInstance.forEach((n, i) => {
          perInstance.set({ config, instance: String(i) }, n);
        });
        ratio.set({ config }, last.retryRatio ?? 0);
        timeout.set({ config }, last.timeoutMs / 1000);
        if (last.liveP99Ms !== null) p99.set({ config }, last.liveP99Ms / 1000);
      }
    },
    text: () => registry.metrics(),
  };
}
