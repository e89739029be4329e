import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prazoInterceptor } from '../src/client/interceptor.js';
import { startServer, warmUp } from './support/servers.js';
import { stockOptions, stockServers } from './support/stock-servers.js';

// Kept apart from urllib's tests: urllib subscribes to undici's diagnostics channels for the whole
// process and throws when one error object ends two requests.

beforeAll(warmUp);

const { flaky, hanging, closeAll } = stockServers();
const options = stockOptions;
afterEach(closeAll);

describe('the interceptor and the older handler API', () => {
  it('streams an answer to an onConnect/onHeaders/onData/onComplete handler, and honours its abort', async () => {
    const own = await flaky();
    const agent = new Agent();
    const interceptor = prazoInterceptor({ dependencies: [options(own.origin)] });
    const dispatch = interceptor(agent.dispatch.bind(agent) as never);
    try {
      const answer = await new Promise<{ status: number; headers: string[]; body: string }>(
        (resolve, reject) => {
          const chunks: Buffer[] = [];
          let status = 0;
          let headers: string[] = [];
          dispatch(
            { origin: own.origin, path: '/x', method: 'GET' },
            {
              onConnect() {},
              onHeaders(statusCode: number, raw: Buffer[]) {
                status = statusCode;
                headers = raw.map(String);
                return true;
              },
              onData(chunk: Buffer) {
                chunks.push(chunk);
                return true;
              },
              onComplete() {
                resolve({ status, headers, body: Buffer.concat(chunks).toString() });
              },
              onError: reject,
            },
          );
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers).toContain('content-type');
      expect(answer.body).toBe('{"stock":7}');
      expect(own.seen.retry).toBe(1);

      const slow = await hanging();
      const abortable = prazoInterceptor({ dependencies: [options(slow.origin, { name: 'slow' })] });
      const slowDispatch = abortable(agent.dispatch.bind(agent) as never);
      const reason = new Error('caller gave up');
      const error = await new Promise((resolve) => {
        slowDispatch(
          { origin: slow.origin, path: '/x', method: 'GET' },
          {
            onConnect(abort: (reason: Error) => void) {
              setTimeout(() => abort(reason), 30);
            },
            onHeaders: () => true,
            onData: () => true,
            onComplete: () => resolve('completed'),
            onError: resolve,
          },
        );
      });
      expect(error).toBe(reason);
      await abortable.close();
    } finally {
      await interceptor.close();
      await agent.destroy();
    }
  });

  it('hands an older-API handler the response headers as the connection received them: case, order and repeats', async () => {
    const server = await headerServer([
      ['X-Stock-Source', 'Warehouse'],
      ['Set-Cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['Content-Type', 'application/json'],
      ['Content-Length', '2'],
    ]);
    const agent = new Agent();
    const interceptor = prazoInterceptor({ dependencies: [options(server.origin)] });
    try {
      // What undici's parser hands a handler, in the server's order (undici 8's own dispatchers no
      // longer take this handler API, so the expectation is written out).
      const governed = await readOlderApiHeaders(
        interceptor(agent.dispatch.bind(agent) as never) as never,
        server.origin,
      );
      expect(governed.slice(0, 10)).toEqual([
        'X-Stock-Source',
        'Warehouse',
        'Set-Cookie',
        'a=1',
        'set-cookie',
        'b=2',
        'Content-Type',
        'application/json',
        'Content-Length',
        '2',
      ]);
    } finally {
      await interceptor.close();
      await agent.destroy();
      server.close();
    }
  });

  it('hands the headers as received to an older-API handler it passes through, too', async () => {
    const server = await headerServer([
      ['X-Stock-Source', 'Warehouse'],
      ['Set-Cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['Content-Length', '2'],
    ]);
    const agent = new Agent();
    // Governs another origin only: this request passes through, adapted where it enters.
    const interceptor = prazoInterceptor({ dependencies: [options('http://127.0.0.1:1')] });
    try {
      const headers = await readOlderApiHeaders(
        interceptor(agent.dispatch.bind(agent) as never) as never,
        server.origin,
      );
      expect(headers.slice(0, 8)).toEqual([
        'X-Stock-Source',
        'Warehouse',
        'Set-Cookie',
        'a=1',
        'set-cookie',
        'b=2',
        'Content-Length',
        '2',
      ]);
    } finally {
      await interceptor.close();
      await agent.destroy();
      server.close();
    }
  });

  it('refuses to be composed onto a second dispatcher', () => {
    const interceptor = prazoInterceptor({ dependencies: [options('http://127.0.0.1:1')] });
    interceptor((() => true) as never);
    expect(() => interceptor((() => true) as never)).toThrow(/one dispatcher/);
  });
});

describe('a finished call', () => {
  it("lets go of the caller's handler once it has ended, though the caller still holds its controller", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const server = await startServer((_req, res) => res.end('ok'));
    const origin = server.origin;
    const agent = new Agent();
    const interceptor = prazoInterceptor({ dependencies: [options(origin)] });
    const dispatch = interceptor(agent.dispatch.bind(agent) as never);
    try {
      // The handler is made and referenced only inside send(): once the call has ended, the
      // controller the caller keeps (as undici's request() does) is the only way left to it.
      const send = (): Promise<{ controller: object; handler: WeakRef<object> }> =>
        new Promise((resolve, reject) => {
          let controller: object | null = null;
          const handler = {
            onRequestStart(c: object) {
              controller = c;
            },
            onResponseStart() {},
            onResponseData() {},
            onResponseEnd() {
              resolve({ controller: controller!, handler: new WeakRef(handler) });
            },
            onResponseError(_c: unknown, error: Error) {
              reject(error);
            },
          };
          dispatch({ origin, path: '/', method: 'GET' }, handler);
        });
      const { controller, handler } = await send();
      await new Promise((r) => setImmediate(r));
      gc();
      await new Promise((r) => setImmediate(r));
      expect(controller).toBeDefined();
      expect(handler.deref()).toBeUndefined();
    } finally {
      await interceptor.close();
      await agent.close();
      await server.close();
    }
  });
});

describe("the caller's request headers", () => {
  it('are read in every form undici takes — record, flat list, pairs, Headers — and a carried deadline only tightens', async () => {
    const traces: unknown[] = [];
    const server = await startServer((req, res) => {
      traces.push(req.headers['x-trace']);
      res.end('ok');
    });
    const origin = server.origin;
    const agent = new Agent();
    const interceptor = prazoInterceptor({ dependencies: [options(origin)] });
    const composed = agent.compose(interceptor);
    try {
      const soon = String(Date.now() + 400);
      const forms: unknown[] = [
        { 'X-Trace': 'record', 'X-Deadline-Epoch-Ms': soon },
        ['X-Trace', 'flat', 'x-deadline-epoch-ms', soon],
        [
          ['x-trace', 'pairs'],
          ['x-deadline-epoch-ms', soon],
        ],
        new Headers({ 'x-trace': 'headers', 'x-deadline-epoch-ms': soon }),
      ];
      for (const headers of forms) {
        const { body } = await composed.request({
          origin,
          path: '/',
          method: 'GET',
          headers: headers as never,
        });
        await body.text();
      }
      // Without a carried deadline, the dependency's own (1.5 s) applies.
      const before = Date.now();
      await (
        await composed.request({ origin, path: '/', method: 'GET', headers: { 'x-trace': 'none' } })
      ).body.text();
      expect(traces).toEqual(['record', 'flat', 'pairs', 'headers', 'none']);
      // One deadline header each (the caller's replaced by prazo's), at most the carried limit.
      for (const deadline of server.seen.deadlines.slice(0, 4)) {
        expect(deadline).toMatch(/^\d+$/);
        expect(Number(deadline)).toBeLessThanOrEqual(Number(soon));
      }
      expect(server.seen.attempts).toEqual(Array(5).fill('1;kind=original'));
      expect(Number(server.seen.deadlines[4])).toBeGreaterThanOrEqual(before + 1_000);
    } finally {
      await interceptor.close();
      await agent.close();
      await server.close();
    }
  });

  it("are sent as given — repeats kept, prazo's own replaced — and an Idempotency-Key in any form makes a POST retryable", async () => {
    const received: { method: string; raw: string[] }[] = [];
    const server = await startServer((req, res) => {
      received.push({ method: req.method!, raw: req.rawHeaders });
      // Every first try of a request answers 503: retried only when it may be sent again.
      res.statusCode = String(req.headers['x-prazo-attempt']).startsWith('1;') ? 503 : 200;
      res.end('ok');
    });
    const origin = server.origin;
    const agent = new Agent();
    const interceptor = prazoInterceptor({ dependencies: [options(origin)] });
    const composed = agent.compose(interceptor);
    const send = async (method: string, headers: unknown): Promise<number> => {
      const { statusCode, body } = await composed.request({
        origin,
        path: '/',
        method,
        headers: headers as never,
        body: 'x',
      });
      await body.text();
      return statusCode;
    };
    try {
      const keyed: unknown[] = [
        { 'Idempotency-Key': 'k-record', 'X-Prazo-Attempt': '9;kind=hedge' },
        ['idempotency-key', 'k-flat', 'X-Tag', 'a', 'X-Tag', 'b'],
        [['IDEMPOTENCY-KEY', 'k-pairs']],
        new Headers({ 'idempotency-key': 'k-headers' }),
      ];
      for (const headers of keyed) expect(await send('POST', headers)).toBe(200);
      expect(received.map((r) => r.method)).toEqual(Array(8).fill('POST'));
      // Without a key, or with a blank one, a POST is sent once and its 503 returned.
      expect(await send('POST', { 'x-tag': 'c' })).toBe(503);
      expect(await send('POST', ['Idempotency-Key', ' '])).toBe(503);
      expect(received).toHaveLength(10);
      const names = (raw: string[]) => raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
      for (const { raw } of received) {
        expect(names(raw).filter((n) => n === 'x-prazo-attempt')).toHaveLength(1);
        expect(names(raw).filter((n) => n === 'x-deadline-epoch-ms')).toHaveLength(1);
      }
      expect(
        received[0]!.raw[received[0]!.raw.findIndex((n) => n.toLowerCase() === 'x-prazo-attempt') + 1],
      ).toBe('1;kind=original');
      const flat = received[2]!.raw;
      expect(flat.filter((_, i) => i > 0 && flat[i - 1] === 'X-Tag')).toEqual(['a', 'b']);
    } finally {
      await interceptor.close();
      await agent.close();
      await server.close();
    }
  });
});

/** A server on 127.0.0.1 that answers `{}` with these header lines, in this order and case. */
async function headerServer(lines: [string, string][]): Promise<{ origin: string; close(): void }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, lines);
    res.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

/** GETs `/x` through `dispatch` with an older-API handler; resolves with the raw header lines it got. */
function readOlderApiHeaders(
  dispatch: (opts: unknown, handler: unknown) => boolean,
  origin: string,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let headers: string[] = [];
    dispatch(
      { origin, path: '/x', method: 'GET' },
      {
        onConnect() {},
        onHeaders(_status: number, raw: Buffer[]) {
          headers = raw.map(String);
          return true;
        },
        onData: () => true,
        onComplete: () => resolve(headers),
        onError: reject,
      },
    );
  });
}
