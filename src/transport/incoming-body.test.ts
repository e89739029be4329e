import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CoarseTimer } from '../coarse-timer.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { DUMP_LIMIT_BYTES, IncomingBody, UNREAD_LIMIT_BYTES } from './incoming-body.js';

/** A source that records what the body asks of the connection (no network). */
function source() {
  const log = { resumes: 0, aborts: [] as Error[] };
  let body: IncomingBody | undefined;
  const src = {
    resume: () => {
      log.resumes++;
    },
    stop: (reason: Error) => {
      log.aborts.push(reason);
      body?.fail(reason); // as undici does: an aborted response fails its body
    },
  };
  body = new IncomingBody(src);
  return { body, log };
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('IncomingBody', () => {
  it('reads a body that arrived before the caller asked for it', async () => {
    const { body } = source();
    body.push(bytes('{"a":'));
    body.push(bytes('1}'));
    body.end();
    await expect(body.json()).resolves.toEqual({ a: 1 });
  });

  it('waits for the rest of a body that is still arriving', async () => {
    const { body } = source();
    body.push(bytes('hel'));
    const text = body.text();
    body.push(bytes('lo'));
    body.end();
    await expect(text).resolves.toBe('hello');
  });

  it('returns bytes and an ArrayBuffer that do not share memory with the chunks', async () => {
    const a = source();
    const chunk = bytes('abc');
    a.body.push(chunk);
    a.body.end();
    const out = await a.body.bytes();
    chunk[0] = 0x7a;
    expect(Buffer.from(out).toString()).toBe('abc');
    const b = source();
    b.body.push(bytes('xyz'));
    b.body.end();
    expect(Buffer.from(await b.body.arrayBuffer()).toString()).toBe('xyz');
  });

  it('drops a leading byte-order mark from text, as Response.text() does', async () => {
    const { body } = source();
    body.push(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69]));
    body.end();
    await expect(body.text()).resolves.toBe('hi');
  });

  it('reassembles a multi-byte character split across chunks', async () => {
    const { body } = source();
    const whole = bytes('prazo é ✓');
    body.push(whole.subarray(0, 8));
    body.push(whole.subarray(8, 11));
    body.push(whole.subarray(11));
    body.end();
    await expect(body.text()).resolves.toBe('prazo é ✓');
  });

  it('rejects invalid JSON with the parser’s SyntaxError', async () => {
    const { body } = source();
    body.push(bytes('{oops'));
    body.end();
    await expect(body.json()).rejects.toBeInstanceOf(SyntaxError);
  });

  it('can be read only once', async () => {
    const { body } = source();
    body.push(bytes('x'));
    body.end();
    await body.text();
    expect(body.bodyUsed).toBe(true);
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
    expect(() => body[Symbol.asyncIterator]()).toThrow(TypeError);
  });

  it('rejects a read in progress with the error that ended the response', async () => {
    const { body } = source();
    body.push(bytes('part'));
    const text = body.text();
    const error = new Error('socket closed');
    body.fail(error);
    await expect(text).rejects.toBe(error);
    const late = source();
    late.body.fail(error);
    await expect(late.body.json()).rejects.toBe(error);
  });

  it('pauses the connection once an unread body holds the limit, and resumes when it is read', async () => {
    const { body, log } = source();
    const half = Buffer.alloc(UNREAD_LIMIT_BYTES / 2);
    expect(body.push(half)).toBe(true);
    expect(body.push(half)).toBe(false);
    expect(log.resumes).toBe(0);
    const read = body.bytes();
    expect(log.resumes).toBe(1);
    expect(body.push(half)).toBe(true); // being consumed: no limit
    body.end();
    expect((await read).length).toBe(UNREAD_LIMIT_BYTES * 1.5);
  });

  it('dumps a short body and resolves once it has ended', async () => {
    const { body, log } = source();
    body.push(bytes('abc'));
    const dumped = body.dump();
    body.push(bytes('def'));
    body.end();
    await expect(dumped).resolves.toBeNull();
    expect(log.aborts).toHaveLength(0);
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('closes the connection instead of dumping a body longer than the limit', async () => {
    const { body, log } = source();
    const dumped = body.dump();
    body.push(Buffer.alloc(DUMP_LIMIT_BYTES));
    expect(log.aborts).toHaveLength(0);
    expect(body.push(Buffer.alloc(1))).toBe(false);
    expect(log.aborts).toHaveLength(1);
    await expect(dumped).resolves.toBeNull();
  });

  it('aborts the response when destroyed before its end, and rejects the reads', async () => {
    const { body, log } = source();
    const text = body.text();
    body.destroy();
    expect(log.aborts).toHaveLength(1);
    await expect(text).rejects.toMatchObject({ code: 'BODY_DESTROYED' });
    const ended = source();
    ended.body.end();
    ended.body.destroy();
    expect(ended.log.aborts).toHaveLength(0);
  });

  it('streams the chunks already buffered, then the rest, in order', async () => {
    const { body } = source();
    body.push(bytes('a'));
    body.push(bytes('b'));
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of body) seen.push(Buffer.from(chunk).toString());
    })();
    body.push(bytes('c'));
    body.end();
    await reading;
    expect(seen.join('')).toBe('abc');
  });

  it('ends a stream with the error that ended the response', async () => {
    const { body } = source();
    const error = new Error('reset');
    const reading = (async () => {
      for await (const _ of body) body.fail(error);
    })();
    body.push(bytes('a'));
    await expect(reading).rejects.toBe(error);
  });

  it('aborts the response when a stream is left early', async () => {
    const { body, log } = source();
    body.push(bytes('a'));
    for await (const _ of body) break;
    expect(log.aborts).toHaveLength(1);
  });

  it('leaves the shared timer when it ends or fails, without a listener', () => {
    const clock = createFakeClock();
    const timer = new CoarseTimer(clock);
    const entry = { dueAt: clock.now() + 1_000, onDue: () => {} };
    const a = source();
    a.body.watch(timer, entry);
    expect(timer.size).toBe(1);
    a.body.end();
    expect(timer.size).toBe(0);
    const b = source();
    b.body.watch(timer, entry);
    b.body.fail(new Error('x'));
    expect(timer.size).toBe(0);
    const c = source();
    c.body.end();
    c.body.watch(timer, entry); // already over: never joins
    expect(timer.size).toBe(0);
    timer.clear();
  });

  it('reads back exactly the bytes pushed, however they are split (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 12 }),
        async (chunks, readAfter) => {
          const { body } = source();
          let read: Promise<Uint8Array> | undefined;
          chunks.forEach((chunk, i) => {
            if (i === readAfter) read = body.bytes();
            body.push(Buffer.from(chunk));
          });
          read ??= body.bytes();
          body.end();
          expect(Buffer.from(await read)).toEqual(Buffer.concat(chunks.map((c) => Buffer.from(c))));
        },
      ),
    );
  });
});

describe('IncomingBody.pipe()', () => {
  /** A sink that records what it gets and asks for a pause when `full` says so. */
  function sink(full: (chunks: string[]) => boolean = () => false) {
    const got = { chunks: [] as string[], ended: 0, errors: [] as Error[] };
    return {
      got,
      sink: {
        data(chunk: Buffer) {
          got.chunks.push(chunk.toString());
          return !full(got.chunks);
        },
        end() {
          got.ended++;
        },
        error(error: Error) {
          got.errors.push(error);
        },
      },
    };
  }

  it('hands the buffered chunks first, then each chunk as it arrives, then the end once', () => {
    const { body } = source();
    body.push(bytes('a'));
    const { got, sink: s } = sink();
    body.pipe(s);
    body.push(bytes('b'));
    body.end();
    body.end();
    expect(got).toEqual({ chunks: ['a', 'b'], ended: 1, errors: [] });
    expect(body.bodyUsed).toBe(true);
  });

  it('pauses the connection when the sink is full, until the sink unpauses the body', () => {
    const { body, log } = source();
    const { got, sink: s } = sink((chunks) => chunks.length === 1);
    body.pipe(s);
    expect(body.push(bytes('x'))).toBe(false);
    expect(log.resumes).toBe(0);
    body.unpause();
    expect(log.resumes).toBe(1);
    expect(body.push(bytes('y'))).toBe(true);
    expect(got.chunks).toEqual(['x', 'y']);
  });

  it('resumes a body that filled its unread buffer once a sink takes it', () => {
    const { body, log } = source();
    expect(body.push(Buffer.alloc(UNREAD_LIMIT_BYTES))).toBe(false);
    body.pipe(sink().sink);
    expect(log.resumes).toBe(1);
  });

  it('reports a failure to the sink, before or after it was piped, and refuses a second reader', () => {
    const early = source();
    early.body.fail(new Error('reset'));
    const a = sink();
    early.body.pipe(a.sink);
    expect(a.got.errors.map((e) => e.message)).toEqual(['reset']);

    const late = source();
    const b = sink();
    late.body.pipe(b.sink);
    late.body.fail(new Error('reset'));
    expect(b.got).toEqual({ chunks: [], ended: 0, errors: [new Error('reset')] });
    expect(() => late.body.pipe(sink().sink)).toThrow(/already read/);
  });
});
