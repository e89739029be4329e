import { describe, expect, it } from 'vitest';
import { type DependencyOptions, normalizeDependencyOptions } from '../client/options.js';
import { isPrazoError } from '../errors.js';
import { calibrateTimeout } from '../policy/calibrate.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createFakeTransport, type FakeTransport } from '../testing/fake-transport.js';
import { settle, TEST_START_MS } from '../testing/test-dependency.js';
import { Call } from './call.js';
import { createEngine } from './engine.js';

const ORIGINS = ['http://10.0.0.1:8080', 'http://10.0.0.2:8080'];

function setup(options: Partial<DependencyOptions> = {}, onOpen?: () => void) {
  const clock = createFakeClock(TEST_START_MS);
  const o = normalizeDependencyOptions({
    name: 'inventory',
    origins: ORIGINS,
    latency: { p99Ms: 100, p95Ms: 50 },
    userDeadlineMs: 1_000,
    clock,
    random: () => 0.5,
    ...options,
  });
  const initial = calibrateTimeout({ p99Ms: 100, userDeadlineMs: 1_000, attempts: o.attempts });
  let transport: FakeTransport | undefined;
  const engine = createEngine(o, initial, () => {
    onOpen?.();
    transport = createFakeTransport(o.origins, (exchange) => exchange.respond(200, {}, 'ok'));
    return transport;
  });
  return { clock, engine, transport: transport!, initial };
}

describe('the engine of a dependency', () => {
  it('sends a call through its steps to the transport, with the deadline and attempt headers', async () => {
    const { clock, engine, transport } = setup();
    const response = await engine.send(new Call(1, { path: '/stock/42' }, clock));
    expect(response.status).toBe(200);
    expect(await response.body.text()).toBe('ok');
    expect(transport.exchanges).toHaveLength(1);
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(TEST_START_MS + 1_000));
    expect(transport.exchanges[0]!.headers['x-prazo-attempt']).toBe('1;kind=original');
    expect(response.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'success' })]);
    await engine.close();
  });

  it('puts the initial policy in force and announces a new one to the policy listeners', async () => {
    const { engine, initial } = setup();
    expect(engine.policy()).toMatchObject({ connectMs: initial.connectMs, readMs: initial.readMs });
    const seen: number[] = [];
    engine.ctx.events.on('policy', (event) => seen.push(event.policy.readMs));
    engine.setPolicy({ ...initial, readMs: 300 });
    expect(engine.ctx.policy.readMs).toBe(300);
    expect(Object.isFrozen(engine.ctx.policy)).toBe(true);
    expect(seen).toEqual([300]);
    await engine.close();
  });

  it('settles the outcome an entry point gives once, never before the call that was given it returns', async () => {
    const { clock, engine } = setup({ throttle: true, concurrency: { minLimit: 2 } });
    engine.ctx.events.on('request-end', () => {});
    const settled: string[] = [];
    /** Starts one call with an outcome that notes how, and whether inside `requestPrepared`, it settled. */
    const start = (options: Parameters<typeof engine.request>[0], aborted = false): void => {
      let inside = true;
      const note = (what: string) => settled.push(inside ? `synchronously: ${what}` : what);
      const handle = { aborted, reason: new Error('gone'), addEventListener() {} };
      engine.requestPrepared(options, null, handle, {
        answered: (response) => note(`answered ${response.status}`),
        failed: (error) => note(`failed ${isPrazoError(error) ? error.code : String(error)}`),
      });
      inside = false;
    };
    start({ path: '/' });
    start({ path: '/', deadline: { limitMs: Number.NaN } });
    start({ path: '/' }, true);
    start({ path: '/', deadline: { limitMs: clock.now() + 10 } });
    await settle(Promise.resolve());
    await new Promise((resolve) => setImmediate(resolve));
    await engine.close();
    start({ path: '/' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled.sort()).toEqual(
      [
        'answered 200',
        'failed INVALID_OPTION',
        'failed CANCELLED',
        'failed DEADLINE_INSUFFICIENT',
        'failed CANCELLED',
      ].sort(),
    );
  });

  it('rejects a call sent after close with CANCELLED and closes its transport', async () => {
    const { clock, engine, transport } = setup();
    await engine.close();
    expect(transport.closed).toBe(true);
    const { error } = await settle(engine.send(new Call(1, { path: '/' }, clock)));
    expect(isPrazoError(error, 'CANCELLED')).toBe(true);
    expect(transport.exchanges).toHaveLength(0);
  });

  it('opens no transport when the retry budget options are unusable', () => {
    let opened = 0;
    expect(() =>
      setup({ retryBudget: { maxRatio: -1 } }, () => {
        opened++;
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(opened).toBe(0);
  });

  it('reads each balancer, throttle and concurrency option once: validated with the dependency, built as validated', async () => {
    const reads: Record<string, number> = {};
    /** `values` behind getters that count how often each is read. */
    const counted = <T extends object>(prefix: string, values: T): T => {
      const options = {};
      for (const [key, value] of Object.entries(values))
        Object.defineProperty(options, key, {
          enumerable: true,
          get: () => {
            reads[`${prefix}.${key}`] = (reads[`${prefix}.${key}`] ?? 0) + 1;
            return value;
          },
        });
      return options as T;
    };
    const { engine } = setup({
      balancer: counted('balancer', { decayMs: 5_000, consecutiveFailures: 3 }),
      throttle: counted('throttle', { k: 2, windowMs: 60_000 }),
      concurrency: counted('concurrency', { tolerance: 2, maxQueued: 10 }),
    });
    expect(reads).toEqual({
      'balancer.decayMs': 1,
      'balancer.consecutiveFailures': 1,
      'throttle.k': 1,
      'throttle.windowMs': 1,
      'concurrency.tolerance': 1,
      'concurrency.maxQueued': 1,
    });
    await engine.close();
  });

  it('reports every instance, and the origins it sends to', async () => {
    const { engine } = setup();
    expect(engine.instances().map((instance) => instance.origin)).toEqual(ORIGINS);
    expect(engine.origins).toEqual(ORIGINS);
    expect(engine.gate).toBeNull();
    expect(engine.throttle).toBeNull();
    await engine.close();
  });
});
