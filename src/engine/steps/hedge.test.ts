import { describe, expect, it } from 'vitest';
import { advance, createTestDependency, settle } from '../../testing/test-dependency.js';

describe('hedging only what may run twice at once', () => {
  it.each(['PUT', 'DELETE'])(
    'never hedges a %s without an Idempotency-Key (one copy in flight; a sequential retry stays allowed)',
    async (method) => {
      const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
      const pending = settle(dep.request({ method, path: '/orders/7' }));
      await advance(clock, 90);
      expect(transport.exchanges).toHaveLength(1);
      transport.exchanges[0]!.respond(503);
      for (let i = 0; i < 40 && transport.exchanges.length < 2; i++) await advance(clock, 10);
      expect(transport.exchanges).toHaveLength(2);
      expect(transport.exchanges[1]!.headers['x-prazo-attempt']).toBe('2;kind=retry');
      transport.exchanges[1]!.respond(200);
      expect((await pending).value?.status).toBe(200);
      await dep.close();
    },
  );

  it.each([
    ['a string', 'order-7'],
    ['a number', 7],
  ])('hedges a POST carrying an Idempotency-Key given as %s', async (_kind, key) => {
    const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
    const pending = settle(
      dep.request({ method: 'POST', path: '/orders', headers: { 'Idempotency-Key': key } }),
    );
    await advance(clock, 60);
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=hedge',
    ]);
    transport.exchanges[1]!.respond(200);
    expect((await pending).value?.status).toBe(200);
    await dep.close();
  });
});

describe('one winner rule', () => {
  it.each([
    ['the hedge copy', [1, 0]],
    ['the first copy', [0, 1]],
  ])(
    'answers a try with the attempt attempt-end calls won when both copies answer in the same turn (%s first)',
    async (_first, order) => {
      const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
      const won: string[] = [];
      dep.on('attempt-end', (e) => {
        if (e.won) won.push(e.kind);
      });
      const pending = settle(dep.request({ path: '/stock/7' }));
      await advance(clock, 60);
      expect(transport.exchanges).toHaveLength(2);
      for (const i of order) transport.exchanges[i]!.respond(200, { 'x-copy': String(i) });
      const response = (await pending).value!;
      expect(won).toHaveLength(1);
      expect(response.headers['x-copy']).toBe(won[0] === 'hedge' ? '1' : '0');
      await dep.close();
    },
  );
});
