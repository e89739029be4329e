/**
 * Order services with the idempotency layer, on 127.0.0.1 and 127.0.0.2: one replica (this process,
 * one in-memory store) listening on both, or two replicas sharing a real redis-server; and a prazo
 * client that mints keys.
 */
import { Redis } from 'ioredis';
import { type Dependency, type DependencyOptions, dependency } from '../../src/index.js';
import {
  createIdempotency,
  createRedisIdempotencyStore,
  type Idempotency,
  type IdempotencyOptions,
} from '../../src/server/http.js';
import {
  Ledger,
  type OrderService,
  type OrderServiceOptions,
  startOrderService,
} from './idempotent-orders.js';
import type { RedisServer } from './redis-server.js';

/**
 * `memory`: one replica (one in-memory store) listening on both addresses; `redis`: two replicas on
 * one redis-server; `memory per instance`: two replicas, each with an in-memory store of its own.
 */
export type StoreKind = 'memory' | 'redis' | 'memory per instance';

export interface Fleet {
  ledger: Ledger;
  services: OrderService[];
  layers: Idempotency[];
  origins: string[];
  client(extra?: Partial<DependencyOptions>): Dependency;
  close(): Promise<void>;
}

/** A Redis client as the docs advise: no offline queue, so that an outage fails fast. */
export async function redisClient(port: number): Promise<Redis> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  });
  // An outage is the layer's to handle; the client's own connection errors are only logged by it.
  client.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    setTimeout(() => reject(new Error('redis client not ready')), 5_000).unref();
  });
  return client;
}

export async function startFleet(
  kind: StoreKind,
  redis: RedisServer | undefined,
  service: Omit<OrderServiceOptions, 'adapter' | 'idempotency' | 'ledger'> & {
    adapter?: OrderServiceOptions['adapter'];
  } = {},
  layerOptions: IdempotencyOptions = {},
): Promise<Fleet> {
  const ledger = new Ledger();
  // Two addresses either way, so that a retry or a hedge can go to "another instance": with the
  // in-memory store both listen in this one process and share one layer (one replica, one store).
  const hosts = ['127.0.0.1', '127.0.0.2'];
  const shared = kind === 'memory' ? createIdempotency(layerOptions) : undefined;
  const clients: Redis[] = [];
  const layers: Idempotency[] = [];
  const services: OrderService[] = [];
  const deps: Dependency[] = [];
  for (const host of hosts) {
    let layer: Idempotency;
    if (kind === 'redis') {
      const client = await redisClient((redis as RedisServer).port);
      clients.push(client);
      layer = createIdempotency({ ...layerOptions, store: createRedisIdempotencyStore({ client }) });
    } else layer = shared ?? createIdempotency(layerOptions);
    if (!layers.includes(layer)) layers.push(layer);
    services.push(
      await startOrderService({
        adapter: 'http',
        ...service,
        idempotency: layer,
        ledger,
        host,
        replica: host,
      }),
    );
  }
  const origins = services.map((s) => s.url);
  return {
    ledger,
    services,
    layers,
    origins,
    client(extra = {}) {
      const dep = dependency({
        name: 'orders',
        origins,
        latency: { p99Ms: 60, p95Ms: 30 },
        userDeadlineMs: 3_000,
        attempts: 3,
        idempotencyKey: 'auto',
        // Where both addresses see one store, a copy may go to either.
        idempotencyScope: kind === 'memory per instance' ? 'instance' : 'fleet',
        ...extra,
      });
      deps.push(dep);
      return dep;
    },
    async close() {
      await Promise.all(deps.map((d) => d.close()));
      await Promise.all(services.map((s) => s.close()));
      for (const c of clients) c.disconnect();
    },
  };
}
