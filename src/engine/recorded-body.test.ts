import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { TEST_START_MS } from '../testing/test-dependency.js';
import { Call } from './call.js';
import { RECORDED_BODY_MAX_BYTES, RecordedBody } from './recorded-body.js';

async function* chunksOf(...chunks: (Uint8Array | string)[]): AsyncGenerator<Uint8Array | string> {
  for (const chunk of chunks) yield chunk;
}

async function* bytesOf(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const text of texts) yield Buffer.from(text);
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts);
}

describe('a recorded stream body', () => {
  it('passes the stream on as it comes, then holds the whole body for the next attempt', async () => {
    const body = new RecordedBody(
      chunksOf('one ', Buffer.from('two '), new Uint8Array([116, 104, 114, 101, 101])),
    );
    expect(body.bytes).toBeNull();
    const seen: string[] = [];
    for await (const chunk of body) seen.push(Buffer.from(chunk).toString());
    expect(seen).toEqual(['one ', 'two ', 'three']);
    expect(Buffer.from(body.bytes!).toString()).toBe('one two three');
    expect((await readAll(body)).toString()).toBe('one two three');
    expect((await readAll(body)).toString()).toBe('one two three');
  });

  it('keeps a copy, not the chunk the stream may write into again', async () => {
    const reused = Buffer.from('abc');
    const body = new RecordedBody(chunksOf(reused));
    for await (const _ of body) reused.write('xyz');
    expect(Buffer.from(body.bytes!).toString()).toBe('abc');
  });

  it('stops recording a stream past its bound and refuses a second reader', async () => {
    const body = new RecordedBody(chunksOf('12345', '678'), 6);
    expect((await readAll(body)).toString()).toBe('12345678');
    expect(body.bytes).toBeNull();
    await expect(readAll(body)).rejects.toThrow(/read once/);
  });

  it('refuses a second reader while the first is still reading', async () => {
    const body = new RecordedBody(chunksOf('a', 'b'));
    const first = body[Symbol.asyncIterator]();
    expect((await first.next()).value).toEqual(Buffer.from('a'));
    await expect(readAll(body)).rejects.toThrow(/read once/);
  });

  it('holds exactly the bytes sent when they fit the bound, and nothing when they do not (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 200 }),
        async (chunks, maxBytes) => {
          const body = new RecordedBody(chunksOf(...chunks), maxBytes);
          const sent = await readAll(body);
          const whole = Buffer.concat(chunks);
          expect(sent.equals(whole)).toBe(true);
          if (whole.byteLength <= maxBytes) expect(Buffer.from(body.bytes!).equals(whole)).toBe(true);
          else expect(body.bytes).toBeNull();
        },
      ),
    );
  });

  it('bounds what it keeps at 64 KiB', () => {
    expect(RECORDED_BODY_MAX_BYTES).toBe(65_536);
  });
});

describe('a call with a stream body', () => {
  const clock = createFakeClock(TEST_START_MS);

  it('may be sent again once an idempotent one has sent its stream whole', async () => {
    const keyed = new Call(
      1,
      { method: 'POST', path: '/orders', headers: { 'idempotency-key': '"k"' }, body: bytesOf('an order') },
      clock,
    );
    // A copy may follow once the stream has been sent whole (the copy checks `replayable` when due).
    expect(keyed.hedgeable).toBe(true);
    expect(keyed.replayable).toBe(false);
    expect((await readAll(keyed.body as AsyncIterable<Uint8Array>)).toString()).toBe('an order');
    expect(keyed.replayable).toBe(true);
    // What the next attempt sends: the bytes themselves.
    expect(Buffer.from(keyed.body as Uint8Array).toString()).toBe('an order');
  });

  it('is sent once when nothing may resend it: the stream is handed on, not recorded', async () => {
    const stream = bytesOf('a payment');
    const plain = new Call(2, { method: 'POST', path: '/payments', body: stream }, clock);
    expect(plain.body).toBe(stream);
    await readAll(plain.body as AsyncIterable<Uint8Array>);
    expect(plain.replayable).toBe(false);
  });

  it('keeps a string or bytes as given, replayable from the start', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(new Call(3, { method: 'PUT', path: '/x', body: bytes }, clock).body).toBe(bytes);
    expect(new Call(4, { method: 'PUT', path: '/x', body: 'text' }, clock).replayable).toBe(true);
    expect(new Call(5, { path: '/x' }, clock).replayable).toBe(true);
  });
});
