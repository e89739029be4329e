import fc from 'fast-check';
import { errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { CancelledError, DeadlineExceededError, PrazoError } from '../errors.js';
import {
  type AttemptOutcome,
  type Classification,
  classify,
  codeOf,
  isFinalStatus,
  judgeError,
  judgeStatus,
  RETRYABLE_STATUSES,
  timeoutOfCode,
} from './classify.js';
import { isIdempotent } from './idempotency.js';

/** The three kinds of request every row is checked against. */
const REQUESTS = [
  { label: 'GET', idempotent: isIdempotent('GET'), kind: 'idempotent' },
  { label: 'POST', idempotent: isIdempotent('POST'), kind: 'non-idempotent' },
  {
    label: 'POST with Idempotency-Key',
    idempotent: isIdempotent('POST', { 'Idempotency-Key': 'order-42' }),
    kind: 'idempotent',
  },
] as const;

describe('classify — statuses', () => {
  // status, retried when idempotent, retried when not, reason when retried (or for both when final)
  const table: Array<[number, boolean, boolean, string]> = [
    [100, false, false, 'not-a-failure'],
    [200, false, false, 'not-a-failure'],
    [204, false, false, 'not-a-failure'],
    [301, false, false, 'not-a-failure'],
    [304, false, false, 'not-a-failure'],
    [400, false, false, 'deterministic-status'],
    [401, false, false, 'deterministic-status'],
    [403, false, false, 'deterministic-status'],
    [404, false, false, 'deterministic-status'],
    [405, false, false, 'deterministic-status'],
    [408, true, false, 'status-408'],
    [409, false, false, 'deterministic-status'],
    [410, false, false, 'deterministic-status'],
    [413, false, false, 'deterministic-status'],
    [422, false, false, 'deterministic-status'],
    [425, false, false, 'deterministic-status'],
    [429, true, true, 'status-429'],
    [451, false, false, 'deterministic-status'],
    [500, true, false, 'status-500'],
    [501, false, false, 'deterministic-status'],
    [502, true, false, 'status-502'],
    [503, true, false, 'status-503'],
    [504, true, false, 'status-504'],
    [505, false, false, 'deterministic-status'],
    [507, false, false, 'deterministic-status'],
    [599, false, false, 'deterministic-status'],
  ];

  for (const [status, idempotentRetry, otherRetry, reason] of table) {
    for (const request of REQUESTS) {
      const retry = request.kind === 'idempotent' ? idempotentRetry : otherRetry;
      const expectedReason = retry || !idempotentRetry ? reason : 'not-idempotent';
      it(`${status} for ${request.label}: ${retry ? 'retried' : `final (${expectedReason})`}`, () => {
        expect(classify({ kind: 'response', status }, { idempotent: request.idempotent })).toEqual({
          retry,
          phase: 'response',
          reason: expectedReason,
          anotherInstance: false,
        });
      });
    }
  }

  it('treats a status outside 100–599 as final', () => {
    for (const status of [0, 99, 600, 200.5, Number.NaN, -1]) {
      expect(classify({ kind: 'response', status }, { idempotent: true })).toMatchObject({
        retry: false,
        reason: 'invalid-status',
      });
    }
  });
});

describe('classify — Retry-After', () => {
  const NOW = Date.parse('2026-12-02T12:00:00Z');

  it('carries the wait of a 429 in delta-seconds, for any method', () => {
    for (const request of REQUESTS) {
      expect(
        classify(
          { kind: 'response', status: 429, headers: { 'retry-after': '2' } },
          { idempotent: request.idempotent, nowMs: NOW },
        ),
      ).toEqual({
        retry: true,
        phase: 'response',
        reason: 'status-429',
        retryAfterMs: 2000,
        anotherInstance: false,
      });
    }
  });

  it('carries the wait of a 503 given as a date, whatever the header name’s case', () => {
    const c = classify(
      { kind: 'response', status: 503, headers: { 'Retry-After': 'Wed, 02 Dec 2026 12:00:03 GMT' } },
      { idempotent: true, nowMs: NOW },
    );
    expect(c).toEqual({
      retry: true,
      phase: 'response',
      reason: 'status-503',
      retryAfterMs: 3000,
      anotherInstance: false,
    });
  });

  it('still never repeats a non-idempotent request after a 503 that carries Retry-After', () => {
    const c = classify(
      { kind: 'response', status: 503, headers: { 'retry-after': '1' } },
      { idempotent: false },
    );
    expect(c).toMatchObject({ retry: false, reason: 'not-idempotent' });
  });

  it('ignores Retry-After on other statuses', () => {
    const c = classify(
      { kind: 'response', status: 500, headers: { 'retry-after': '1' } },
      { idempotent: true },
    );
    expect(c).not.toHaveProperty('retryAfterMs');
  });

  it('ignores a malformed Retry-After: the failure stays retryable, without a server wait', () => {
    const c = classify(
      { kind: 'response', status: 429, headers: { 'retry-after': 'soon' } },
      { idempotent: true },
    );
    expect(c).toEqual({ retry: true, phase: 'response', reason: 'status-429', anotherInstance: false });
  });

  it('makes the failure final when the server asks for more than a day', () => {
    const c = classify(
      { kind: 'response', status: 429, headers: { 'retry-after': '90000' } },
      { idempotent: true },
    );
    expect(c).toMatchObject({ retry: false, reason: 'retry-after-too-long' });
  });

  it('reads a past date as “retry now”', () => {
    const c = classify(
      { kind: 'response', status: 429, headers: { 'retry-after': 'Wed, 02 Dec 2026 11:00:00 GMT' } },
      { idempotent: true, nowMs: NOW },
    );
    expect(c.retryAfterMs).toBe(0);
  });
});

const errorWith = (code: string, extra: object = {}) => Object.assign(new Error(code), { code }, extra);

describe('classify — errors', () => {
  // error, phase, reason; connect-phase errors are retried for every request, read-phase ones only
  // for idempotent requests.
  const retryable: Array<[string, unknown, 'connect' | 'read', string]> = [
    ['ECONNREFUSED', errorWith('ECONNREFUSED', { syscall: 'connect' }), 'connect', 'connect-refused'],
    ['UND_ERR_CONNECT_TIMEOUT', new undiciErrors.ConnectTimeoutError(), 'connect', 'connect-timeout'],
    ['CONNECT_TIMEOUT (prazo)', new PrazoError('CONNECT_TIMEOUT', 'x'), 'connect', 'connect-timeout'],
    ['ETIMEDOUT in connect', errorWith('ETIMEDOUT', { syscall: 'connect' }), 'connect', 'connect-timeout'],
    ['EHOSTUNREACH', errorWith('EHOSTUNREACH'), 'connect', 'connect-unreachable'],
    ['ENETUNREACH', errorWith('ENETUNREACH'), 'connect', 'connect-unreachable'],
    ['EHOSTDOWN', errorWith('EHOSTDOWN'), 'connect', 'connect-unreachable'],
    ['ENOTFOUND', errorWith('ENOTFOUND', { syscall: 'getaddrinfo' }), 'connect', 'connect-dns'],
    ['EAI_AGAIN', errorWith('EAI_AGAIN', { syscall: 'getaddrinfo' }), 'connect', 'connect-dns'],
    ['EADDRNOTAVAIL', errorWith('EADDRNOTAVAIL'), 'connect', 'connect-no-local-address'],
    ['UND_ERR_HEADERS_TIMEOUT', new undiciErrors.HeadersTimeoutError(), 'read', 'read-timeout'],
    ['UND_ERR_BODY_TIMEOUT', new undiciErrors.BodyTimeoutError(), 'read', 'read-timeout'],
    ['READ_TIMEOUT (prazo)', new PrazoError('READ_TIMEOUT', 'x'), 'read', 'read-timeout'],
    ['ETIMEDOUT on an open socket', errorWith('ETIMEDOUT', { syscall: 'read' }), 'read', 'read-timeout'],
    ['ETIMEDOUT without syscall', errorWith('ETIMEDOUT'), 'read', 'read-timeout'],
    ['ECONNRESET', errorWith('ECONNRESET', { syscall: 'read' }), 'read', 'read-reset'],
    ['EPIPE', errorWith('EPIPE', { syscall: 'write' }), 'read', 'read-broken-pipe'],
    ['UND_ERR_SOCKET', new undiciErrors.SocketError('other side closed'), 'read', 'read-socket-closed'],
    ['UND_ERR_CLOSED', new undiciErrors.ClientClosedError(), 'read', 'read-client-closed'],
    // HTTP/2 stream resets, as Node's http2 reports them (undici 8 adds the code as a number).
    [
      'an HTTP/2 REFUSED_STREAM (undici 8)',
      errorWith('ERR_HTTP2_STREAM_ERROR', { http2ErrorCode: 7 }),
      'connect',
      'connect-refused-stream',
    ],
    [
      'an HTTP/2 REFUSED_STREAM (the message alone)',
      Object.assign(new Error('Stream closed with error code NGHTTP2_REFUSED_STREAM'), {
        code: 'ERR_HTTP2_STREAM_ERROR',
      }),
      'connect',
      'connect-refused-stream',
    ],
    [
      'an HTTP/2 INTERNAL_ERROR reset',
      Object.assign(new Error('Stream closed with error code NGHTTP2_INTERNAL_ERROR'), {
        code: 'ERR_HTTP2_STREAM_ERROR',
        http2ErrorCode: 2,
      }),
      'read',
      'read-stream-reset',
    ],
  ];

  for (const [label, error, phase, reason] of retryable) {
    for (const request of REQUESTS) {
      const retry = phase === 'connect' || request.kind === 'idempotent';
      it(`${label} for ${request.label}: ${retry ? `retried (${phase})` : 'final (not-idempotent)'}`, () => {
        const expected: Classification = retry
          ? { retry: true, phase, reason, anotherInstance: phase === 'connect' }
          : { retry: false, phase, reason: 'not-idempotent', anotherInstance: false };
        expect(classify({ kind: 'error', error }, { idempotent: request.idempotent })).toEqual(expected);
      });
    }
  }

  const final: Array<[string, unknown, string]> = [
    ['CANCELLED (prazo)', new CancelledError(), 'cancelled'],
    ['DEADLINE_EXCEEDED (prazo)', new DeadlineExceededError(), 'deadline-exceeded'],
    ['DEADLINE_INSUFFICIENT (prazo)', new PrazoError('DEADLINE_INSUFFICIENT', 'x'), 'deadline-insufficient'],
    ['UND_ERR_ABORTED', new undiciErrors.RequestAbortedError(), 'cancelled'],
    [
      'UND_ERR_ABORT',
      new (undiciErrors as unknown as { AbortError: new (message: string) => Error }).AbortError('x'),
      'cancelled',
    ],
    ['AbortError of an AbortController', abortReason(), 'cancelled'],
    ['TimeoutError of AbortSignal.timeout', new DOMException('t', 'TimeoutError'), 'cancelled'],
    ['ABORT_ERR (Node)', errorWith('ABORT_ERR'), 'cancelled'],
    ['a plain Error', new Error('boom'), 'unknown-error'],
    ['UND_ERR_DESTROYED', new undiciErrors.ClientDestroyedError(), 'unknown-error'],
    ['HPE_INVALID_CONSTANT', errorWith('HPE_INVALID_CONSTANT'), 'unknown-error'],
    ['UND_ERR_INVALID_ARG', new undiciErrors.InvalidArgumentError('x'), 'unknown-error'],
    ['a string', 'ECONNREFUSED', 'unknown-error'],
    ['null', null, 'unknown-error'],
    ['undefined', undefined, 'unknown-error'],
  ];

  for (const [label, error, reason] of final) {
    for (const request of REQUESTS) {
      it(`${label} for ${request.label}: never retried (${reason})`, () => {
        expect(classify({ kind: 'error', error }, { idempotent: request.idempotent })).toEqual({
          retry: false,
          phase: 'read',
          reason,
          anotherInstance: false,
        });
      });
    }
  }

  it('finds the code in the cause chain', () => {
    const wrapped = new Error('fetch failed', {
      cause: new Error('x', { cause: errorWith('ECONNREFUSED') }),
    });
    expect(classify({ kind: 'error', error: wrapped }, { idempotent: false })).toMatchObject({
      retry: true,
      reason: 'connect-refused',
    });
  });

  it('lets the outermost known code win: prazo’s read timeout around the abort it caused', () => {
    const timeout = new PrazoError('READ_TIMEOUT', 'read timeout', {
      cause: new undiciErrors.RequestAbortedError(),
    });
    expect(classify({ kind: 'error', error: timeout }, { idempotent: true })).toMatchObject({
      retry: true,
      reason: 'read-timeout',
    });
    const cancelled = new CancelledError('caller gave up', { cause: errorWith('ECONNREFUSED') });
    expect(classify({ kind: 'error', error: cancelled }, { idempotent: true })).toMatchObject({
      retry: false,
      reason: 'cancelled',
    });
  });

  it('reads the per-address errors of a happy-eyeballs AggregateError', () => {
    const error = new AggregateError(
      [errorWith('ECONNREFUSED'), errorWith('ECONNREFUSED')],
      'connect failed',
    );
    expect(classify({ kind: 'error', error }, { idempotent: false })).toMatchObject({
      retry: true,
      phase: 'connect',
      reason: 'connect-refused',
    });
  });

  it('survives a cycle in the cause chain', () => {
    const a: { cause?: unknown } = {};
    const b = { cause: a };
    a.cause = b;
    expect(classify({ kind: 'error', error: a }, { idempotent: true }).reason).toBe('unknown-error');
  });

  it('judges the status inside undici’s response error', () => {
    const error = Object.assign(new Error('Response Error'), {
      code: 'UND_ERR_RESPONSE',
      statusCode: 503,
      headers: { 'retry-after': '1' },
    });
    expect(classify({ kind: 'error', error }, { idempotent: true })).toEqual({
      retry: true,
      phase: 'response',
      reason: 'status-503',
      retryAfterMs: 1000,
      anotherInstance: false,
    });
  });
});

describe('classify — bodies that cannot be replayed', () => {
  const outcomes: Array<[string, AttemptOutcome]> = [
    ['503', { kind: 'response', status: 503 }],
    ['429', { kind: 'response', status: 429 }],
    ['ECONNREFUSED', { kind: 'error', error: errorWith('ECONNREFUSED') }],
    ['UND_ERR_HEADERS_TIMEOUT', { kind: 'error', error: new undiciErrors.HeadersTimeoutError() }],
  ];
  for (const [label, outcome] of outcomes) {
    it(`never retries a one-shot stream body after ${label}, even before connecting`, () => {
      expect(classify(outcome, { idempotent: true, replayable: false })).toMatchObject({
        retry: false,
        reason: 'stream-body',
      });
    });
  }
});

describe('classify and error codes named like object properties', () => {
  it('treats `__proto__`, `constructor` and `toString` as unknown codes (found by the property test)', () => {
    for (const code of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const c = classify({ kind: 'error', error: { code } }, { idempotent: false });
      expect(c).toMatchObject({ retry: false, phase: 'read', reason: 'unknown-error' });
    }
  });
});

describe('classify — never throws (property)', () => {
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error('trap');
      },
      ownKeys() {
        throw new Error('trap');
      },
    },
  );
  const code = fc.constantFrom(
    'ECONNREFUSED',
    'ETIMEDOUT',
    'ECONNRESET',
    'UND_ERR_ABORTED',
    'UND_ERR_RESPONSE',
    'READ_TIMEOUT',
    'CANCELLED',
    'X',
  );
  const errorLike = fc.letrec((tie) => ({
    error: fc.oneof(
      { depthSize: 'small' },
      fc.anything(),
      fc.record(
        {
          code: fc.oneof(code, fc.anything()),
          name: fc.oneof(fc.constantFrom('AbortError', 'TimeoutError'), fc.string()),
          syscall: fc.constantFrom('connect', 'read', undefined),
          statusCode: fc.oneof(fc.integer({ min: 0, max: 700 }), fc.anything()),
          headers: fc.anything(),
          errors: fc.array(tie('error'), { maxLength: 3 }),
          cause: tie('error'),
        },
        { requiredKeys: [] },
      ),
      fc.constant(hostile),
    ),
  })).error;
  const headers = fc.oneof(
    fc.dictionary(
      fc.constantFrom('retry-after', 'Retry-After', 'x'),
      fc.oneof(fc.string(), fc.array(fc.string())),
    ),
    fc.anything(),
    fc.constant(hostile),
  );
  const outcome = fc.oneof(
    fc.record({
      kind: fc.constant('response'),
      status: fc.oneof(fc.integer({ min: -1, max: 700 }), fc.double()),
      headers,
    }),
    fc.record({ kind: fc.constant('error'), error: errorLike }),
    fc.anything(),
    fc.constant(hostile),
  ) as fc.Arbitrary<AttemptOutcome>;
  const context = fc.record(
    {
      idempotent: fc.boolean(),
      replayable: fc.boolean(),
      nowMs: fc.oneof(fc.integer({ min: 0, max: 4e12 }), fc.double()),
    },
    { requiredKeys: ['idempotent'] },
  );

  it('always answers, and never lets a non-idempotent request or a stream be sent twice', () => {
    fc.assert(
      fc.property(outcome, context, (o, ctx) => {
        const c = classify(o, ctx);
        expect(typeof c.retry).toBe('boolean');
        expect(['connect', 'read', 'response']).toContain(c.phase);
        expect(c.reason).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
        if (c.retry && !ctx.idempotent) expect(c.phase === 'connect' || c.reason === 'status-429').toBe(true);
        if (c.retry && ctx.replayable === false) throw new Error('retried a one-shot body');
        if (c.anotherInstance) expect(c.phase).toBe('connect');
        if (c.retryAfterMs !== undefined) expect(Number.isFinite(c.retryAfterMs)).toBe(true);
      }),
      { numRuns: 10_000 },
    );
  });

  it('judges any error once into the classification, the code and the timeout, without throwing', () => {
    fc.assert(
      fc.property(errorLike, context, (error, ctx) => {
        const verdict = judgeError(error, ctx);
        expect(verdict.classification).toEqual(classify({ kind: 'error', error }, ctx));
        expect(verdict.timeout).toBe(timeoutOfCode(verdict.code));
        if (verdict.code !== undefined) expect(typeof verdict.code).toBe('string');
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('judgeError', () => {
  it('reads the code of the error, or of its direct cause, and the timeout it reports', () => {
    const headers = new undiciErrors.HeadersTimeoutError();
    expect(judgeError(headers, { idempotent: true })).toEqual({
      classification: { retry: true, phase: 'read', reason: 'read-timeout', anotherInstance: false },
      code: 'UND_ERR_HEADERS_TIMEOUT',
      timeout: 'read',
    });
    const wrapped = new Error('wrapped', { cause: { code: 'ECONNREFUSED' } });
    expect(judgeError(wrapped, { idempotent: false })).toMatchObject({
      classification: { retry: true, phase: 'connect', reason: 'connect-refused' },
      code: 'ECONNREFUSED',
      timeout: undefined,
    });
    expect(codeOf(new Error('x', { cause: new Error('y', { cause: { code: 'EPIPE' } }) }))).toBeUndefined();
    expect(judgeError('not an error', { idempotent: true })).toMatchObject({
      classification: { retry: false, reason: 'unknown-error' },
      code: undefined,
      timeout: undefined,
    });
  });
});

describe('judgeStatus', () => {
  it('judges every status one way: success, final or retryable, and whether it failed or was refused', () => {
    expect(judgeStatus(200)).toEqual({ kind: 'success', failed: false, refused: false });
    expect(judgeStatus(404)).toEqual({ kind: 'final', failed: false, refused: false });
    expect(judgeStatus(501)).toEqual({ kind: 'final', failed: true, refused: false });
    expect(judgeStatus(408)).toEqual({ kind: 'retryable', failed: false, refused: false });
    expect(judgeStatus(429)).toEqual({ kind: 'retryable', failed: false, refused: true });
    expect(judgeStatus(500)).toEqual({ kind: 'retryable', failed: true, refused: false });
    for (const status of [502, 503, 504])
      expect(judgeStatus(status)).toEqual({ kind: 'retryable', failed: true, refused: true });
  });

  it('agrees with classify on every status', () => {
    for (let status = 100; status <= 599; status++) {
      const { reason } = classify({ kind: 'response', status }, { idempotent: true });
      const kind = judgeStatus(status).kind;
      expect(
        reason === 'not-a-failure' ? 'success' : reason === 'deterministic-status' ? 'final' : 'retryable',
      ).toBe(kind);
      expect(RETRYABLE_STATUSES.has(status)).toBe(kind === 'retryable');
    }
  });
});

describe('isFinalStatus', () => {
  it('calls an answer below 400 or one no retry would change final, and a retryable status not', () => {
    for (const status of [200, 204, 304, 400, 404, 409, 422, 501]) expect(isFinalStatus(status)).toBe(true);
    for (const status of [408, 429, 500, 502, 503, 504]) expect(isFinalStatus(status)).toBe(false);
  });
});

function abortReason(): unknown {
  const controller = new AbortController();
  controller.abort();
  return controller.signal.reason;
}

describe('timeoutOfCode', () => {
  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'connect'],
    ['CONNECT_TIMEOUT', 'connect'],
    ['UND_ERR_HEADERS_TIMEOUT', 'read'],
    ['UND_ERR_BODY_TIMEOUT', 'read'],
    ['READ_TIMEOUT', 'read'],
    ['ECONNREFUSED', undefined],
    ['ETIMEDOUT', undefined],
    ['DEADLINE_EXCEEDED', undefined],
    ['__proto__', undefined],
    [undefined, undefined],
  ])('says %s reports a %s timeout', (code, timeout) => {
    expect(timeoutOfCode(code)).toBe(timeout);
  });

  it("agrees with classify's reason for every code it names", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(
            'UND_ERR_CONNECT_TIMEOUT',
            'CONNECT_TIMEOUT',
            'UND_ERR_HEADERS_TIMEOUT',
            'READ_TIMEOUT',
          ),
          fc.string(),
        ),
        (code) => {
          const timeout = timeoutOfCode(code);
          const { reason } = classify({ kind: 'error', error: { code } }, { idempotent: true });
          if (timeout !== undefined) expect(reason).toBe(`${timeout}-timeout`);
          else if (code !== 'ETIMEDOUT') expect(reason).not.toMatch(/-timeout$/);
        },
      ),
    );
  });
});
