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
  ])(
    'hedges a POST carrying an Idempotency-Key given as %s (keys shared by the fleet)',
    async (_kind, key) => {
      const { dep, clock, transport } = createTestDependency({
        hedge: { at: 'p95' },
        idempotencyScope: 'fleet',
      });
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
    },
  );
});

describe('hedging a call whose body is a stream', () => {
  async function* order(): AsyncGenerator<Uint8Array> {
    yield Buffer.from('{"sku":');
    yield Buffer.from('42}');
  }

  /** A keyed POST with a stream body to a fleet that shares its keys, hedged at the p95. */
  function keyedStreamPost() {
    const test = createTestDependency({ hedge: { at: 'p95' }, idempotencyScope: 'fleet' });
    const pending = settle(
      test.dep.request({
        method: 'POST',
        path: '/orders',
        headers: { 'idempotency-key': '"k"' },
        body: order(),
      }),
    );
    return { ...test, pending };
  }

  it('sends the copy with the recorded bytes once the first attempt has sent the stream whole', async () => {
    const { dep, clock, transport, pending } = keyedStreamPost();
    await advance(clock, 1);
    // The first attempt sends the stream: the transport reads it.
    const sent: Uint8Array[] = [];
    for await (const chunk of transport.exchanges[0]!.body as AsyncIterable<Uint8Array>) sent.push(chunk);
    await advance(clock, 60);
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=hedge',
    ]);
    expect(Buffer.from(transport.exchanges[1]!.body as Uint8Array).toString()).toBe('{"sku":42}');
    transport.exchanges[1]!.respond(201);
    expect((await pending).value?.status).toBe(201);
    await dep.close();
  });

  it('sends no copy while the stream is still being sent, and spends no budget on it', async () => {
    const { dep, clock, transport, pending } = keyedStreamPost();
    await advance(clock, 90);
    expect(transport.exchanges).toHaveLength(1);
    expect(dep.budget()).toMatchObject({ extras: 0 });
    transport.exchanges[0]!.respond(201);
    expect((await pending).value?.status).toBe(201);
    await dep.close();
  });
});

describe('hedging turned off for one call (hedge: false)', () => {
  it('sends no hedge copy for that call, while the same call without it is hedged', async () => {
    for (const [hedge, sent] of [
      [undefined, ['1;kind=original', '2;kind=hedge']],
      [true, ['1;kind=original', '2;kind=hedge']],
      [false, ['1;kind=original']],
    ] as const) {
      const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
      const pending = settle(dep.request({ path: '/stock/7', ...(hedge === undefined ? {} : { hedge }) }));
      // Past the p95 (50 ms), before the read timeout (140 ms).
      await advance(clock, 90);
      expect(
        transport.exchanges.map((e) => e.headers['x-prazo-attempt']),
        `hedge: ${hedge}`,
      ).toEqual(sent);
      transport.exchanges[0]!.respond(200);
      expect((await pending).value?.status).toBe(200);
      await dep.close();
    }
  });

  it("keeps its retries: with lastAttempt 'deadline', the retry still goes beside the attempt at its read timeout", async () => {
    const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' }, lastAttempt: 'deadline' });
    const pending = settle(dep.request({ path: '/stock/7', hedge: false }));
    for (let i = 0; i < 40 && transport.exchanges.length < 2; i++) await advance(clock, 10);
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '2;kind=retry',
    ]);
    transport.exchanges[1]!.respond(200);
    expect((await pending).value?.status).toBe(200);
    await dep.close();
  });

  it('refuses anything but true or false, naming the option', async () => {
    const { dep } = createTestDependency({ hedge: { at: 'p95' } });
    const { error } = await settle(dep.request({ path: '/', hedge: 'no' as never }));
    expect(error).toMatchObject({ code: 'INVALID_OPTION', option: 'hedge' });
    await dep.close();
  });
});

const THREE = ['http://10.0.0.1:80', 'http://10.0.0.2:80', 'http://10.0.0.3:80'];
const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

describe("a keyed write whose key each instance remembers for itself (idempotencyScope: 'instance', the default)", () => {
  const keyed = { method: 'POST', path: '/orders', body: '{}' } as const;

  it('is never hedged to another instance, and its retry after a read timeout goes back to the same one', async () => {
    const { dep, clock, transport } = createTestDependency({
      origins: THREE,
      hedge: { at: 'p95' },
      idempotencyKey: 'auto',
      attempts: 3,
    });
    const pending = settle(dep.request(keyed));
    // Past the p95 (50 ms): no hedge; past the read timeout (140 ms): the retry.
    for (let i = 0; i < 40 && transport.exchanges.length < 2; i++) await advance(clock, 10);
    const [first, second] = transport.exchanges;
    expect(second!.headers['x-prazo-attempt']).toBe('2;kind=retry');
    expect(second!.origin).toBe(first!.origin);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    second!.respond(201);
    expect((await pending).value?.status).toBe(201);
    await dep.close();
  });

  it('goes back to the instance whose answer was lost (a reset), and elsewhere after an answer or a refused connect', async () => {
    const seen: string[] = [];
    const { dep, clock, transport } = createTestDependency(
      { origins: THREE, idempotencyKey: 'auto', attempts: 4, requeue: false },
      (e) => {
        seen.push(e.origin);
        if (seen.length === 1) e.fail(reset);
        else if (seen.length === 2) e.respond(503);
        else if (seen.length === 3) e.fail(refused);
        else e.respond(201);
      },
    );
    const pending = settle(dep.request(keyed));
    // Through the retries' backoff.
    for (let i = 0; i < 100 && transport.exchanges.length < 4; i++) await advance(clock, 10);
    expect((await pending).value?.status).toBe(201);
    expect(transport.exchanges).toHaveLength(4);
    // The reset may have come after the write: the retry goes back. The 503 answered: the next
    // retry may go anywhere (the balancer prefers another instance), as after a refused connect.
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).not.toBe(seen[1]);
    expect(seen[3]).not.toBe(seen[2]);
    await dep.close();
  });

  it("with lastAttempt 'deadline', keeps the attempt waiting rather than sending its retry anywhere", async () => {
    const { dep, clock, transport } = createTestDependency({
      origins: THREE,
      idempotencyKey: 'auto',
      attempts: 3,
      lastAttempt: 'deadline',
    });
    const pending = settle(dep.request(keyed));
    await advance(clock, 600);
    expect(transport.exchanges).toHaveLength(1);
    transport.exchanges[0]!.respond(201);
    expect((await pending).value?.status).toBe(201);
    await dep.close();
  });

  it('leaves a keyed POST declared idempotent, and a GET, as they were (hedged)', async () => {
    const { dep, clock, transport } = createTestDependency({ origins: THREE, hedge: { at: 'p95' } });
    const calls = [
      settle(dep.request({ path: '/stock/7' })),
      settle(dep.request({ ...keyed, headers: { 'Idempotency-Key': '"k"' }, idempotent: true })),
    ];
    await advance(clock, 60);
    expect(transport.exchanges.map((e) => e.headers['x-prazo-attempt'])).toEqual([
      '1;kind=original',
      '1;kind=original',
      '2;kind=hedge',
      '2;kind=hedge',
    ]);
    for (const e of transport.pending()) e.respond(200);
    for (const call of calls) expect((await call).value?.status).toBe(200);
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

describe('the live p95 with the calls hedging cut short', () => {
  /**
   * 36 calls one after another: every tenth has a first copy that does not answer, so its hedge copy
   * (sent at the p95 in force) answers 10 ms later and wins; the others answer in 10 ms. The live
   * window is read after 20 healthy samples.
   */
  async function run(): Promise<{ p95Ms: number | undefined; source: string; hedges: number }> {
    const { dep, clock, transport } = createTestDependency({
      hedge: { at: 'p95' },
      liveMinSamples: 20,
      liveRefreshMs: 1,
    });
    let hedges = 0;
    dep.on('hedge', () => hedges++);
    for (let i = 0; i < 36; i++) {
      const sent = transport.exchanges.length;
      const pending = settle(dep.request({ path: `/stock/${i}` }));
      if (i % 10 === 9) {
        for (let t = 0; t < 400 && transport.exchanges.length < sent + 2; t += 5) await advance(clock, 5);
        expect(transport.exchanges).toHaveLength(sent + 2);
        await advance(clock, 10);
        transport.exchanges[sent + 1]!.respond(200);
      } else {
        await advance(clock, 10);
        transport.exchanges[sent]!.respond(200);
      }
      expect((await pending).value?.status).toBe(200);
    }
    const policy = dep.policy();
    await dep.close();
    return { p95Ms: policy.p95Ms, source: policy.sources.p95, hedges };
  }

  it('counts the overtaken first copy at the time it had run: no fast call is hedged', async () => {
    const { p95Ms, source, hedges } = await run();
    // Without the overtaken copies the window holds only answers of 10 ms (the fast calls and the
    // winning copies): a p95 of 10 ms, and from there on every call is hedged (18 hedges). With
    // them, 3 of 39 samples ran past the hedge delay, and the p95 stays well above the fast calls.
    expect(source).toBe('live');
    expect(p95Ms).toBeGreaterThan(20);
    expect(hedges).toBe(3);
  });
});
