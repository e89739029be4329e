import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { StoredResponse } from './idempotency-store.js';
import { captureResponse, type ResponseCapture } from './response-capture.js';

/**
 * Serves one request on a real server with its response captured (bound `maxBytes`), written by
 * `write`; resolves with the bytes the client received and what the capture stored.
 */
async function captured(
  maxBytes: number,
  write: (res: ServerResponse) => void,
): Promise<{ received: Buffer; headers: Record<string, unknown>; stored: StoredResponse | null }> {
  let stored: StoredResponse | null | undefined;
  const server = createServer((_req, res) => {
    captureResponse(res, maxBytes, {
      onResponseEnd: (capture: ResponseCapture) => {
        stored = capture.stored();
      },
    });
    write(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const res = await request(`http://127.0.0.1:${port}/`);
    const received = Buffer.from(await res.body.arrayBuffer());
    if (stored === undefined) throw new Error('the capture was not told of the end');
    return { received, headers: res.headers, stored };
  } finally {
    server.close();
  }
}

describe('the response capture', () => {
  it('stores the bytes the client received, whatever the chunks were: ASCII and UTF-8 strings, other encodings, buffers', async () => {
    const { received, stored } = await captured(1 << 20, (res) => {
      res.write('{"a":'); // short ASCII, kept as characters
      res.write('"é€😀",'); // UTF-8 beyond ASCII
      res.write('aGk=', 'base64'); // "hi"
      res.write('ÿ', 'latin1');
      res.write(Buffer.from([0, 1, 2]));
      res.write(new Uint8Array([3]));
      res.write('x'.repeat(2_000)); // a long ASCII string
      res.end('}');
    });
    expect(Buffer.from(stored!.body)).toEqual(received);
    expect(received.toString('latin1')).toContain('hi\xff\x00\x01\x02\x03');
    expect(received.subarray(0, 17).toString('utf8')).toBe('{"a":"é€😀",');
  });

  it('stores a lone surrogate as the replacement character the client received', async () => {
    const { received, stored } = await captured(1 << 20, (res) => res.end('a\ud800b'));
    expect(Buffer.from(stored!.body)).toEqual(received);
    expect(received).toEqual(Buffer.from([0x61, 0xef, 0xbf, 0xbd, 0x62]));
  });

  it('counts a string by its bytes against the bound: one byte over stores no response', async () => {
    // 'é' is two bytes in UTF-8: 5 characters, 6 bytes.
    expect((await captured(6, (res) => res.end('aébcd'))).stored?.body).toHaveLength(6);
    expect((await captured(5, (res) => res.end('aébcd'))).stored).toBeNull();
    expect((await captured(4, (res) => res.end('abcde'))).stored).toBeNull();
  });

  it('stores the headers set on the response and given to writeHead, lower-cased, without per-transmission ones', async () => {
    const { stored } = await captured(1 << 20, (res) => {
      res.setHeader('X-Order', ['1', '2']);
      res.setHeader('Date', 'Thu, 01 Jan 2026 00:00:00 GMT');
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': 2, 'X-Count': 7 });
      res.end('{}');
    });
    expect(stored).toMatchObject({ status: 201 });
    expect(stored!.headers).toEqual({
      'x-order': ['1', '2'],
      'content-type': 'application/json',
      'x-count': '7',
    });
  });

  it('stores the headers of a writeHead with an array of names and values', async () => {
    const { stored } = await captured(1 << 20, (res) => {
      res.writeHead(200, ['Content-Type', 'text/plain', 'X-One', '1']);
      res.end('ok');
    });
    expect(stored!.headers).toEqual({ 'content-type': 'text/plain', 'x-one': '1' });
  });
});
