import { createRandom } from '@prazo/lab/random';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { type ChildServer, startChildServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

const servers: ChildServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * Both instances pause on every 20th request they get (5 % of their requests, a GC pause or a cold
 * cache): a pause nobody can foresee, so the balancer cannot steer calls away from it (with one
 * instance pausing and the other always fast, it learns to avoid the pausing one, and hedging has
 * nothing left to cut). The pause is long (1 s) so that the 5× cut stands out of the scheduling noise of a
 * busy 2-core machine, where even a local server has a p99 of tens of ms.
 */
const SLOW_MS = 1_000;

async function twoInstances(): Promise<[ChildServer, ChildServer]> {
  const [a, b] = await Promise.all([
    startChildServer('slow-every-20th', SLOW_MS),
    startChildServer('slow-every-20th', SLOW_MS),
  ]);
  servers.push(a, b);
  return [a, b];
}

async function run(hedge: boolean, requests: number, concurrency: number) {
  const [a, b] = await twoInstances();
  const dep = dependency({
    name: 'catalog',
    origins: [a.origin, b.origin],
    // The p95 as `prazo calibrate` would give it for this pair on a busy 2-core machine; held for the
    // whole run (a live p95 of a few ms would spend the budget on scheduling noise and make the
    // figure depend on the machine's load rather than on hedging).
    latency: { p99Ms: 1_200, p95Ms: 50 },
    liveMinSamples: 1_000_000,
    userDeadlineMs: 4_000,
    hedge: hedge ? { at: 'p95' } : false,
    random: createRandom(42),
  });
  const durations: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      next++;
      const t0 = performance.now();
      const res = await dep.request({ path: '/item' });
      await res.body.dump();
      durations.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await dep.close();
  durations.sort((x, y) => x - y);
  const p99 = durations[Math.ceil(durations.length * 0.99) - 1]!;
  const [sa, sb] = await Promise.all([a.stats(), b.stats()]);
  const originals = sa.original + sb.original;
  const extras = sa.hedge + sb.hedge + sa.retry + sb.retry;
  return { p99, originals, extras, hedges: sa.hedge + sb.hedge };
}

describe('hedging', () => {
  it('cuts the p99 by at least 5× when instances are slow on 5 % of their requests, with extras ≤ 10 %', async () => {
    const requests = 600;
    const plain = await run(false, requests, 6);
    const hedged = await run(true, requests, 6);
    expect(plain.extras).toBe(0);
    expect(plain.p99).toBeGreaterThanOrEqual(SLOW_MS - 10);
    expect(hedged.hedges).toBeGreaterThan(0);
    expect(plain.p99 / hedged.p99).toBeGreaterThanOrEqual(5);
    expect(hedged.extras).toBeLessThanOrEqual(0.1 * requests);
  }, 30_000);
});
