import { describe, expect, it } from 'vitest';
import { ReadTimeoutError } from '../errors.js';
import { createAbortHandle } from '../testing/abort-handle.js';
import { createDispatchTransport, type DispatchFunction } from './dispatch-transport.js';
import type { OutgoingRequest } from './transport.js';

function request(written: string[]): OutgoingRequest {
  return {
    origin: 'http://127.0.0.1:1',
    method: 'GET',
    path: '/stock',
    requestHeaders: ['x-a', '1'],
    requestBody: undefined,
    timeoutMs: 1_000,
    transportTimeoutMs: 2_000,
    written: () => written.push('written'),
  };
}

/** The handler an undici 6 dispatcher is handed: only the older callbacks are called on it. */
interface OlderHandler {
  onConnect(abort: (reason: Error) => void): void;
  onHeaders(status: number, raw: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: Buffer[]): void;
}

describe('an exchange dispatched to an undici 6 dispatcher (the older handler API only)', () => {
  it('answers with the status, the headers as received and the body, and says when the request was written', async () => {
    const seen: { options?: Record<string, unknown>; handler?: OlderHandler } = {};
    const dispatch: DispatchFunction = (options, handler) => {
      seen.options = options;
      seen.handler = handler;
      return true;
    };
    const written: string[] = [];
    const sent = createDispatchTransport(['http://127.0.0.1:1'], () => dispatch).send(
      request(written),
      createAbortHandle(),
    );
    expect(seen.options).toMatchObject({
      method: 'GET',
      path: '/stock',
      headers: ['x-a', '1'],
      headersTimeout: 2_000,
    });
    const older = seen.handler!;
    older.onConnect(() => {});
    expect(written).toEqual(['written']);
    const raw = [
      Buffer.from('Content-Type'),
      Buffer.from('text/plain'),
      Buffer.from('X-Repeat'),
      Buffer.from('1'),
      Buffer.from('X-Repeat'),
      Buffer.from('2'),
    ];
    expect(older.onHeaders(200, raw, () => {}, 'OK')).toBe(true);
    const response = await sent;
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'content-type': 'text/plain', 'x-repeat': ['1', '2'] });
    older.onData(Buffer.from('in '));
    older.onData(Buffer.from('stock'));
    older.onComplete([]);
    expect(await response.body.text()).toBe('in stock');
  });

  it('drops a request aborted while queued when its turn comes: never written, failed as a connect timeout', async () => {
    let older: OlderHandler | undefined;
    const dispatch: DispatchFunction = (_options, handler) => {
      older = handler;
      return true;
    };
    const written: string[] = [];
    const signal = createAbortHandle();
    const sent = createDispatchTransport(['http://127.0.0.1:1'], () => dispatch).send(
      request(written),
      signal,
    );
    signal.abort(new ReadTimeoutError('No answer within 1 ms.', { timeoutMs: 1 }));
    // Its own read timeout before it was written: a connect timeout, safe to send again.
    await expect(sent).rejects.toMatchObject({ code: 'CONNECT_TIMEOUT' });
    const aborts: Error[] = [];
    older!.onConnect((reason) => aborts.push(reason));
    expect(aborts).toHaveLength(1);
    expect(written).toEqual([]);
  });
});
