import { createRandom } from '@prazo/lab/random';
import { describe, expect, it } from 'vitest';
import type { InstanceEvent } from '../engine/events.js';
import { advance, createTestDependency, flush, settle } from '../testing/test-dependency.js';

const A = 'http://10.0.0.1:8080';
const B = 'http://10.0.0.2:8080';

describe('dependency.instances() and the instance events', () => {
  it('reports each instance’s state, latency, calls in flight and share', async () => {
    const { dep, clock } = createTestDependency({ origins: [A, B], random: createRandom(1) }, (e) => {
      clock.advance(e.origin === A ? 5 : 20);
      e.respond(200);
    });
    try {
      for (let i = 0; i < 20; i++) await (await dep.request({ path: '/' })).body.dump();
      const [a, b] = dep.instances();
      expect(a).toMatchObject({ origin: A, state: 'up', inFlight: 0 });
      expect(b).toMatchObject({ origin: B, state: 'up', inFlight: 0 });
      expect(a!.ewmaMs).toBeGreaterThan(0);
      expect(a!.share + b!.share).toBeCloseTo(1);
      expect(a!.share).toBeGreaterThan(b!.share); // the faster one takes more
    } finally {
      await dep.close();
    }
  });

  it('emits instance-ejected after consecutive 503s and sends the calls elsewhere', async () => {
    const { dep, clock } = createTestDependency({ origins: [A, B], random: createRandom(2) }, (e) =>
      e.respond(e.origin === A ? 503 : 200),
    );
    const ejected: InstanceEvent[] = [];
    dep.on('instance-ejected', (e) => ejected.push(e));
    try {
      for (let i = 0; i < 30; i++) {
        const pending = settle(dep.request({ path: '/' }));
        await advance(clock, 200); // the retry's backoff
        const { value } = await pending;
        expect(value?.status).toBe(200);
        await value?.body.dump();
      }
      await flush();
      expect(ejected).toHaveLength(1);
      expect(ejected[0]).toMatchObject({
        dependency: 'inventory',
        instance: A,
        from: 'up',
        to: 'ejected',
        reason: 'consecutive-failures',
        timesEjected: 1,
      });
      expect(dep.instances()[0]!.state).toBe('ejected');
    } finally {
      await dep.close();
    }
  });

  it('reports a single instance up with share 1, without consulting the balancer', async () => {
    const { dep } = createTestDependency({ origins: [A] }, (e) => e.respond(200));
    try {
      await (await dep.request({ path: '/' })).body.dump();
      expect(dep.instances()).toEqual([expect.objectContaining({ origin: A, state: 'up', share: 1 })]);
    } finally {
      await dep.close();
    }
  });
});
