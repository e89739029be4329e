import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { type Clock, isPrazoError, systemClock } from 'prazo';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { type Double, startDouble, startDoubles } from '../src/index.js';

const agent = new Agent({ connect: { timeout: 2_000 } });
afterAll(() => agent.close());

type RequestOptions = Parameters<typeof request>[1];

async function send(url: string, options: RequestOptions = {}) {
  const started = performance.now();
  const response = await request(url, { dispatcher: agent, ...options });
  const headersMs = performance.now() - started;
  const body = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    body,
    headersMs,
    totalMs: performance.now() - started,
  };
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ code?: string; name?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected the request to fail');
}

/** Polls (bounded) until `check` holds: the double learns of a client's abort a moment later. */
async function eventually(check: () => boolean, withinMs = 5_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await sleep(10);
  }
}

async function withDouble(
  options: Parameters<typeof startDouble>[0],
  body: (double: Double) => Promise<void>,
) {
  const double = await startDouble(options);
  try {
    await body(double);
  } finally {
    await double.close();
  }
}

describe('the dependency double', () => {
  it('answers 200 with a JSON body on 127.0.0.1 by default', async () => {
    await withDouble({}, async (double) => {
      expect(double.url).toBe(`http://127.0.0.1:${double.port}`);
      const response = await send(`${double.url}/anything?q=1`);
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ instance: 0, request: 1, status: 200 });
      expect(double.stats().requests[0]).toMatchObject({ method: 'GET', path: '/anything?q=1' });
    });
  });

  it('refuses to bind anywhere but a loopback address', async () => {
    for (const host of ['0.0.0.0', '10.0.0.1', '127.0.0.256', 'localhost', '::1']) {
      const error = await failure(startDouble({ host }));
      expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
      expect(error.message).toContain('`host`');
    }
  });

  it('binds another loopback address for another instance of a fleet', async () => {
    await withDouble({ host: '127.0.0.2' }, async (double) => {
      expect(double.url).toBe(`http://127.0.0.2:${double.port}`);
      expect((await send(double.url)).status).toBe(200);
    });
  });

  it('answers at the configured instant, not before', async () => {
    await withDouble({ behaviour: { answerAtMs: 150 } }, async (double) => {
      const response = await send(double.url);
      expect(response.headersMs).toBeGreaterThanOrEqual(145);
      expect(response.headersMs).toBeLessThan(3_000);
    });
  });

  it('answers the configured shares of 503 and 429, with Retry-After on the 429s', async () => {
    const statuses = [
      { status: 503, share: 0.2 },
      { status: 429, share: 0.1, retryAfter: '1' },
    ];
    await withDouble({ behaviour: { statuses }, seed: 1234 }, async (double) => {
      const seen: Record<number, number> = { 200: 0, 429: 0, 503: 0 };
      for (let batch = 0; batch < 20; batch++) {
        const responses = await Promise.all(Array.from({ length: 20 }, () => send(double.url)));
        for (const response of responses) {
          seen[response.status] = (seen[response.status] ?? 0) + 1;
          expect(response.headers['retry-after']).toBe(response.status === 429 ? '1' : undefined);
        }
      }
      expect(seen[503]! / 400).toBeGreaterThan(0.14);
      expect(seen[503]! / 400).toBeLessThan(0.26);
      expect(seen[429]! / 400).toBeGreaterThan(0.06);
      expect(seen[429]! / 400).toBeLessThan(0.14);
      expect(double.stats().byStatus).toEqual({ '200': seen[200], '429': seen[429], '503': seen[503] });
    });
  });

  it('replays the same statuses for the same seed', async () => {
    const behaviour = { statuses: [{ status: 503, share: 0.5 }] };
    const run = async () => {
      const double = await startDouble({ behaviour, seed: 99 });
      const seen: number[] = [];
      for (let i = 0; i < 20; i++) seen.push((await send(double.url)).status);
      await double.close();
      return seen;
    };
    expect(await run()).toEqual(await run());
  });

  it('answers 204 without a body', async () => {
    await withDouble({ behaviour: { statuses: [{ status: 204, share: 1 }] } }, async (double) => {
      const response = await send(double.url);
      expect(response.status).toBe(204);
      expect(response.body).toBe('');
    });
  });

  it('refuses connections, then accepts again on the same port', async () => {
    await withDouble({}, async (double) => {
      expect((await send(double.url)).status).toBe(200);
      await double.set({ refuse: true });
      expect((await failure(send(double.url))).code).toBe('ECONNREFUSED');
      await double.set({});
      const response = await send(double.url);
      expect(response.status).toBe(200);
      expect(double.url).toBe(`http://127.0.0.1:${double.port}`);
    });
  });

  it('makes new connects time out, then accepts again on the same port', async () => {
    await withDouble({ behaviour: { connectTimeout: true } }, async (double) => {
      const client = new Agent({ connect: { timeout: 200 } });
      try {
        const started = performance.now();
        const error = await failure(request(double.url, { dispatcher: client }));
        expect(error.code).toBe('UND_ERR_CONNECT_TIMEOUT');
        expect(performance.now() - started).toBeLessThan(5_000);
      } finally {
        await client.close();
      }
      await double.set({});
      expect((await send(double.url)).status).toBe(200);
    });
  });

  it('resets the connection mid-body: the client gets headers, then a body error', async () => {
    await withDouble({ behaviour: { resetMidBody: true, bodyBytes: 4096 } }, async (double) => {
      const response = await request(double.url, { dispatcher: agent });
      expect(response.statusCode).toBe(200);
      const error = await failure(response.body.text());
      expect(error.code).toBe('UND_ERR_SOCKET');
      expect(double.stats().faults.resetMidBody).toBe(1);
    });
  });

  it('resets the connection before any header', async () => {
    await withDouble({ behaviour: { resetBeforeHeaders: true } }, async (double) => {
      const error = await failure(send(double.url, { method: 'POST', body: 'x'.repeat(1000) }));
      expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(error.code);
      await eventually(() => double.stats().inFlight === 0);
      expect(double.stats().faults.resetBeforeHeaders).toBe(1);
    });
  });

  it('holds a hung request, after reading its body, until the client gives up', async () => {
    await withDouble({ behaviour: { hang: true } }, async (double) => {
      const controller = new AbortController();
      const pending = failure(
        send(double.url, { method: 'POST', body: 'payload', signal: controller.signal }),
      );
      await eventually(() => double.stats().faults.hang === 1);
      expect(double.stats().inFlight).toBe(1);
      await sleep(200);
      expect(double.stats().inFlight).toBe(1);
      controller.abort();
      expect((await pending).name).toBe('AbortError');
      await eventually(() => double.stats().inFlight === 0);
    });
  });

  it('drips a slow body over the configured time', async () => {
    await withDouble({ behaviour: { slowBodyMs: 300 } }, async (double) => {
      const response = await send(double.url);
      // Timers only ever fire late, so the body taking the full time after the headers is robust.
      expect(response.totalMs - response.headersMs).toBeGreaterThanOrEqual(280);
      expect(JSON.parse(response.body).status).toBe(200);
    });
  });

  it('counts originals, retries and hedges from the attempt header', async () => {
    await withDouble({}, async (double) => {
      for (const value of ['1;kind=original', '2;kind=retry', '2;kind=hedge', '3;kind=hedge', undefined]) {
        await send(double.url, value ? { headers: { 'x-prazo-attempt': value } } : {});
      }
      expect(double.stats()).toMatchObject({
        received: 5,
        originals: 2,
        retries: 1,
        hedges: 2,
        unknownKind: 1,
      });
    });
  });

  it('counts requests that arrive after their deadline', async () => {
    let now = 10_000;
    const clock: Clock = { ...systemClock, now: () => now };
    await withDouble({ clock }, async (double) => {
      await send(double.url, { headers: { 'x-deadline-epoch-ms': '10500' } });
      now = 10_500;
      await send(double.url, { headers: { 'x-deadline-epoch-ms': '10500' } });
      await send(double.url, { headers: { 'x-deadline-epoch-ms': '9000' } });
      await send(double.url);
      const stats = double.stats();
      expect(stats.afterDeadline).toBe(2);
      expect(stats.requests.map((r) => r.deadlineMs)).toEqual([10_500, 10_500, 9_000, null]);
      expect(stats.requests.map((r) => r.arrivedAtMs)).toEqual([10_000, 10_500, 10_500, 10_500]);
    });
  });

  it('switches behaviour through the admin endpoint and does not count admin calls', async () => {
    await withDouble({}, async (double) => {
      const set = await send(`${double.adminUrl}/behaviour`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ statuses: [{ status: 503, share: 1 }] }),
      });
      expect(set.status).toBe(200);
      expect(JSON.parse(set.body).statuses).toEqual([{ status: 503, share: 1, retryAfter: null }]);
      expect((await send(double.url)).status).toBe(503);
      const stats = JSON.parse((await send(`${double.adminUrl}/stats`)).body);
      expect(stats).toMatchObject({ received: 1, byStatus: { '503': 1 } });
      const reset = await send(`${double.adminUrl}/reset`, { method: 'POST' });
      expect(JSON.parse(reset.body).received).toBe(0);
      expect(double.stats().received).toBe(0);
    });
  });

  it('answers a bad admin command with 400 naming the field, and keeps the behaviour', async () => {
    await withDouble({ behaviour: { answerAtMs: 1 } }, async (double) => {
      const bad = await send(`${double.adminUrl}/behaviour`, { method: 'POST', body: '{"hang":7}' });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).error).toMatchObject({ code: 'INVALID_INPUT' });
      expect(JSON.parse(bad.body).error.message).toContain('`hang`');
      expect(double.behaviour().latency).toEqual({ type: 'fixed', ms: 1 });
      expect((await send(`${double.adminUrl}/nope`)).status).toBe(404);
      expect((await send(`${double.adminUrl}/stats`, { method: 'POST' })).status).toBe(405);
    });
  });

  it('answers any admin body with 200 or a typed 400, and keeps serving', async () => {
    await withDouble({ adminPort: 0 }, async (double) => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.string(),
          ),
          async (body) => {
            const response = await send(`${double.adminUrl}/behaviour`, { method: 'POST', body });
            expect([200, 400]).toContain(response.status);
            if (response.status === 400) expect(JSON.parse(response.body).error.code).toBe('INVALID_INPUT');
          },
        ),
        { numRuns: 200 },
      );
      await double.set({});
      expect((await send(double.url)).status).toBe(200);
    });
  });

  it('serves admin on its own port, reachable while the double refuses', async () => {
    await withDouble({ adminPort: 0 }, async (double) => {
      expect(double.adminUrl).not.toContain(`:${double.port}/`);
      const refuse = await send(`${double.adminUrl}/behaviour`, { method: 'POST', body: '{"refuse":true}' });
      expect(refuse.status).toBe(200);
      expect((await failure(send(double.url))).code).toBe('ECONNREFUSED');
      const open = await send(`${double.adminUrl}/behaviour`, { method: 'POST', body: '{}' });
      expect(open.status, open.body).toBe(200);
      expect((await send(double.url)).status).toBe(200);
    });
  });

  it('takes its port back after refusing, once a listener that briefly took it lets go', async () => {
    await withDouble({ adminPort: 0 }, async (double) => {
      await send(`${double.adminUrl}/behaviour`, { method: 'POST', body: '{"refuse":true}' });
      // While nothing of the double listens, another server of this machine asking for any free
      // port may be given the double's (tests find a refusing port that way: listen, then close).
      const squatter = createServer();
      squatter.listen(double.port, '127.0.0.1');
      await once(squatter, 'listening');
      const released = sleep(150).then(() => new Promise((resolve) => squatter.close(resolve)));
      const open = await send(`${double.adminUrl}/behaviour`, { method: 'POST', body: '{}' });
      expect(open.status, open.body).toBe(200);
      await released;
      expect((await send(double.url)).status).toBe(200);
    });
  });

  it('starts several instances with their own behaviour: one slow instance', async () => {
    const group = await startDoubles(3, {
      behaviour: (i) => (i === 0 ? { answerAtMs: 500 } : undefined),
    });
    try {
      const times = [];
      for (const url of group.urls) times.push((await send(url)).headersMs);
      expect(times[0]).toBeGreaterThanOrEqual(495);
      expect(Math.max(times[1]!, times[2]!)).toBeLessThan(times[0]!);
      expect(group.stats().map((s) => s.received)).toEqual([1, 1, 1]);
      expect(new Set(group.urls).size).toBe(3);
    } finally {
      await group[Symbol.asyncDispose]();
    }
  });

  it('starts no listener or worker once close has begun, even with a switch racing it', async () => {
    const double = await startDouble({ behaviour: { refuse: true } });
    const switching = double.set({ connectTimeout: true });
    const closing = double.close();
    const late = double.set({});
    await Promise.allSettled([switching, closing, late]);
    await new Promise((resolve) => setImmediate(resolve));
    const error = await failure(request(double.url, { dispatcher: agent }));
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('closes every socket, hung ones included, and leaves no handle behind', async () => {
    const count = () => {
      const counts: Record<string, number> = {};
      for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
      return counts;
    };
    const client = new Agent();
    await sleep(20); // earlier tests' handles finish closing
    const before = count();
    const double = await startDouble({ behaviour: { hang: true }, adminPort: 0 });
    const pending = failure(request(double.url, { dispatcher: client }));
    await eventually(() => double.stats().inFlight === 1);
    await double.set({ connectTimeout: true });
    await double[Symbol.asyncDispose]();
    expect((await pending).code).toBe('UND_ERR_SOCKET');
    await client.close();
    await new Promise((resolve) => setImmediate(resolve));
    const after = count();
    expect(after['TCPServerWrap'] ?? 0).toBe(before['TCPServerWrap'] ?? 0);
    expect(after['TCPSocketWrap'] ?? 0).toBe(before['TCPSocketWrap'] ?? 0);
    expect(after['Timeout'] ?? 0).toBeLessThanOrEqual(before['Timeout'] ?? 0);
  });
});
