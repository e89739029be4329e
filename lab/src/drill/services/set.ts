import type { NormalizedDrillOptions } from '../drill-options.js';
import { type HaproxySidecar, startHaproxy } from '../peers/haproxy-sidecar.js';
import { peerSettings } from '../peers/settings.js';
import { SUPPLIER_INSTANCES, supplierBehaviour } from '../phase-plan.js';
import { type ServiceProcess, startServiceProcess } from './process.js';
import type { DrillConfig, TierSpec } from './spec.js';

/** What the drill stops at the end: a service process or the HAProxy sidecar. */
export type Stoppable = Pick<ServiceProcess, 'pid' | 'stop' | 'kill'>;

/** The services of one configuration: supplier instances, the chain, and the shop at its head. */
export interface ServiceSet {
  readonly config: DrillConfig;
  /** The shop (the chain's gateway): where the users' traffic goes. */
  readonly gateway: ServiceProcess;
  readonly orders: ServiceProcess;
  readonly inventory: ServiceProcess;
  readonly suppliers: readonly ServiceProcess[];
  /** The HAProxy configuration's sidecar between inventory and the supplier instances. */
  readonly sidecar: HaproxySidecar | null;
  /** Every process, for stopping and for the leak check. */
  readonly all: readonly Stoppable[];
  stop(): Promise<void>;
  kill(): void;
}

/** The loopback address supplier instance `instance` listens on: 127.0.0.1, 127.0.0.2, 127.0.0.3 … */
export function supplierHost(instance: number): string {
  return `127.0.0.${instance + 1}`;
}

/**
 * Starts the services of one configuration, each in its own process so that one busy event loop
 * cannot slow another: `SUPPLIER_INSTANCES` supplier doubles (each on its own loopback address, as
 * the instances of a fleet are on their own hosts), then inventory → orders → gateway.
 * `track` receives every process as soon as it exists, so an interrupted start can still kill it.
 */
export async function startServiceSet(
  config: DrillConfig,
  options: NormalizedDrillOptions,
  track: (process: Stoppable) => void,
  haproxyBinary: string | null = null,
  redisPort: number | null = null,
): Promise<ServiceSet> {
  const started = async (name: string, spec: Parameters<typeof startServiceProcess>[1]) => {
    const process = await startServiceProcess(`${config}/${name}`, spec);
    track(process);
    return process;
  };
  const suppliers = await Promise.all(
    Array.from({ length: SUPPLIER_INSTANCES }, (_, instance) =>
      started(`supplier-${instance}`, {
        role: 'supplier',
        instance,
        host: supplierHost(instance),
        seed: options.seed + instance,
        behaviour: supplierBehaviour('warmup', instance, 0, options),
        workers: options.supplierWorkers,
        // The naive and prazo columns write the checkout's order; prazo's writes go through the
        // idempotency layer, on the drill's Redis when there is one (one store for the fleet).
        ...(config === 'naive' || config === 'prazo'
          ? {
              writes: {
                idempotency: config === 'prazo',
                redisPort: config === 'prazo' ? redisPort : null,
                redisPrefix: `prazo:drill:${config}:`,
                deadlineMs: options.gatewayDeadlineMs,
              },
            }
          : {}),
      }),
    ),
  );
  const peer = config === 'naive' || config === 'prazo' ? undefined : peerSettings(options);
  let sidecar: HaproxySidecar | null = null;
  if (config === 'haproxy') {
    if (haproxyBinary === null) throw new Error('The HAProxy configuration needs haproxy.');
    sidecar = await startHaproxy(
      haproxyBinary,
      { ...peer!, servers: suppliers.map((s) => s.url), checkPath: '/stock' },
      `${config}/haproxy`,
    );
    track(sidecar);
  }
  const tier = (
    name: string,
    path: string,
    downstreamName: string,
    downstream: string[],
    downstreamPath: string,
    edge: boolean,
  ): TierSpec => ({
    role: 'tier',
    name,
    config,
    path,
    downstreamName,
    downstream,
    downstreamPath,
    edge,
    naive: { timeoutMs: options.naiveTimeoutMs, attempts: options.naiveAttempts },
    ...(edge && peer ? { peer } : {}),
    startP99Ms: options.healthyP99Ms,
    deadline: { defaultMs: options.gatewayDeadlineMs, maxMs: options.gatewayDeadlineMs },
  });
  const inventory = await started('inventory', {
    ...tier(
      'inventory',
      '/reserve',
      'supplier',
      sidecar ? [sidecar.url] : suppliers.map((s) => s.url),
      '/stock',
      true,
    ),
    orderKeys: redisPort === null ? 'instance' : 'fleet',
  });
  const orders = await started(
    'orders',
    tier('orders', '/orders', 'inventory', [inventory.url], '/reserve', false),
  );
  const gateway = await started('gateway', {
    ...tier('gateway', '/checkout', 'orders', [orders.url], '/orders', false),
    shop: {
      pool: {
        size: options.pool,
        maxWaiting: options.poolMaxWaiting,
        acquireTimeoutMs: options.poolAcquireTimeoutMs,
      },
      catalogWorkMs: 2,
    },
  });
  const all: Stoppable[] = [gateway, orders, inventory, ...(sidecar ? [sidecar] : []), ...suppliers];
  return {
    config,
    gateway,
    orders,
    inventory,
    suppliers,
    sidecar,
    all,
    async stop() {
      await Promise.all(all.map((p) => p.stop()));
    },
    kill() {
      for (const p of all) p.kill();
    },
  };
}
