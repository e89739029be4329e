import { calibratePolicy, type Dependency, dependencyOf, poolOptions } from '../client/dependency.js';
import { type DependencyOptions, normalizeDependencyOptions } from '../client/options.js';
import { createEngine } from '../engine/engine.js';
import type { PoolTransportOptions } from '../transport/pool-transport.js';
import type { Transport } from '../transport/transport.js';
import { createFakeClock, type FakeClock } from './fake-clock.js';
import { createFakeTransport, type FakeExchange, type FakeTransport } from './fake-transport.js';

/** Epoch ms the test dependencies start at. */
export const TEST_START_MS = 1_800_000_000_000;

/** A dependency over a fake transport and a fake clock, for unit tests of the client's steps. */
export interface TestDependency {
  clock: FakeClock;
  dep: Dependency;
  transport: FakeTransport;
}

/**
 * Creates a dependency named `inventory` with two instances, a static p99 of 100 ms (p95 50 ms), a
 * 1 s user deadline, a fake clock at {@link TEST_START_MS} and a fake transport; `options` override
 * any of these. `onRequest` may answer each exchange as it is sent.
 */
export function createTestDependency(
  options: Partial<DependencyOptions> = {},
  onRequest?: (exchange: FakeExchange) => void,
): TestDependency {
  const clock = createFakeClock(TEST_START_MS);
  let transport: FakeTransport | undefined;
  const dep = dependencyOver(
    {
      name: 'inventory',
      origins: ['http://10.0.0.1:80', 'http://10.0.0.2:80'],
      latency: { p99Ms: 100, p95Ms: 50 },
      userDeadlineMs: 1_000,
      clock,
      random: () => 0.5,
      ...options,
    },
    (o) => {
      transport = createFakeTransport(o.origins, onRequest);
      return transport;
    },
  );
  return { clock, dep, transport: transport! };
}

/**
 * A dependency of `options` as `dependency()` builds it — its engine, its API — over the transport
 * `open` returns for the options of the pools it would have opened (a fake transport, or pools that
 * fail in a chosen way) in their place.
 */
export function dependencyOver(
  options: DependencyOptions,
  open: (pools: PoolTransportOptions) => Transport,
): Dependency {
  const o = normalizeDependencyOptions(options);
  const initial = calibratePolicy(o, o.latency.p99Ms);
  return dependencyOf(
    o,
    createEngine(o, initial, () => open(poolOptions(o, initial))),
  );
}

/** Resolves with the value or the error of `promise`, never rejects. */
export function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/** Lets pending promise callbacks and I/O callbacks run. */
export const flush = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Advances the fake clock by `ms` in steps of `step` ms, letting promises run in between. */
export async function advance(clock: FakeClock, ms: number, step = 5): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    await flush();
  }
}
