import { describe, expect, it } from 'vitest';
import { Deadline } from '../deadline/deadline.js';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createFakeTransport, type FakeTransport } from '../testing/fake-transport.js';
import { dependencyOver } from '../testing/test-dependency.js';

const START = 1_800_000_000_000;

function answering200() {
  const clock = createFakeClock(START);
  let transport: FakeTransport | undefined;
  const dep = dependencyOver(
    {
      name: 'inventory',
      origins: ['http://10.0.0.1:80'],
      latency: { p99Ms: 100 },
      userDeadlineMs: 2_000,
      clock,
    },
    (o) => {
      transport = createFakeTransport(o.origins, (e) => e.respond(200));
      return transport;
    },
  );
  return { clock, dep, transport: transport! };
}

/** The option named by the INVALID_OPTION a call rejects with (it must reject with one). */
async function refusedOption(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPrazoError(error, 'INVALID_OPTION'))
    throw new Error(`expected INVALID_OPTION, got ${String(error)}`);
  return (error as unknown as { option: string }).option;
}

describe('request() options in plain JavaScript', () => {
  it('takes a number deadline as milliseconds from now', async () => {
    const { dep, transport } = answering200();
    await dep.request({ path: '/', deadline: 200 });
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(START + 200));
    await dep.close();
  });

  it('takes a Deadline and an object with an absolute limitMs', async () => {
    const { clock, dep, transport } = answering200();
    await dep.request({ path: '/', deadline: Deadline.after(300, clock) });
    await dep.request({ path: '/', deadline: { limitMs: START + 400 } });
    expect(transport.exchanges.map((e) => e.headers['x-deadline-epoch-ms'])).toEqual([
      String(START + 300),
      String(START + 400),
    ]);
    await dep.close();
  });

  it('refuses an unusable deadline with INVALID_OPTION instead of running on the default', async () => {
    const { dep, transport } = answering200();
    const refused: unknown[] = ['soon', '200', Number.NaN, Number.POSITIVE_INFINITY, START + 200, null, true];
    for (const deadline of refused) {
      expect(await refusedOption(dep.request({ path: '/', deadline: deadline as never }))).toBe('deadline');
    }
    expect(await refusedOption(dep.request({ path: '/', deadline: new Date() as never }))).toBe(
      'deadline.limitMs',
    );
    expect(await refusedOption(dep.request({ path: '/', deadline: { limitMs: '1' } as never }))).toBe(
      'deadline.limitMs',
    );
    expect(transport.exchanges).toHaveLength(0);
    await dep.close();
  });

  it('refuses an unusable signal, idempotent flag or body, naming it', async () => {
    const { dep, transport } = answering200();
    expect(await refusedOption(dep.request({ path: '/', signal: 'stop' as never }))).toBe('signal');
    expect(await refusedOption(dep.request({ path: '/', signal: {} as never }))).toBe('signal');
    expect(await refusedOption(dep.request({ path: '/', idempotent: 'yes' as never }))).toBe('idempotent');
    expect(await refusedOption(dep.request({ path: '/', method: 'PUT', body: { a: 1 } as never }))).toBe(
      'body',
    );
    expect(await refusedOption(dep.request({ path: '/', method: 'PUT', body: 42 as never }))).toBe('body');
    expect(transport.exchanges).toHaveLength(0);
    await dep.close();
  });

  it('refuses a header or query value that would reach the wire as [object Object]', async () => {
    const { dep, transport } = answering200();
    expect(await refusedOption(dep.request({ path: '/', headers: { 'x-user': { id: 1 } as never } }))).toBe(
      'headers.x-user',
    );
    expect(await refusedOption(dep.request({ path: '/', headers: { accept: ['a', {} as never] } }))).toBe(
      'headers.accept',
    );
    expect(await refusedOption(dep.request({ path: '/', query: { id: { a: 1 } as never } }))).toBe(
      'query.id',
    );
    await dep.request({
      path: '/',
      headers: { 'content-length': 0, accept: ['a', 'b'] },
      query: { n: 1, b: true },
    });
    expect(transport.exchanges).toHaveLength(1);
    expect(transport.exchanges[0]!.path).toBe('/?n=1&b=true');
    await dep.close();
  });

  it('refuses an option request() does not know, such as timeout, instead of ignoring it', async () => {
    const { dep, transport } = answering200();
    expect(await refusedOption(dep.request({ path: '/', timeout: 500 } as never))).toBe('timeout');
    expect(await refusedOption(dep.request({ path: '/', url: 'http://x/' } as never))).toBe('url');
    // An unknown name left undefined changes nothing and is let through.
    await dep.request({ path: '/', timeout: undefined } as never);
    expect(transport.exchanges).toHaveLength(1);
    await dep.close();
  });

  it('accepts a null signal and body as absent', async () => {
    const { dep, transport } = answering200();
    await dep.request({ path: '/', signal: null, body: null });
    expect(transport.exchanges).toHaveLength(1);
    await dep.close();
  });
});
