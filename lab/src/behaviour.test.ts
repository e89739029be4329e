import { isPrazoError } from 'prazo';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BEHAVIOUR, ioWaitMs, parseBehaviour, parseBehaviourJson, pickOutcome } from './behaviour.js';

const messageOf = (input: unknown): string => {
  try {
    parseBehaviour(input);
  } catch (error) {
    expect(isPrazoError(error, 'INVALID_INPUT')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected parseBehaviour to throw');
};

describe('parseBehaviour', () => {
  it('gives the healthy default for an empty object', () => {
    expect(parseBehaviour({})).toEqual(DEFAULT_BEHAVIOUR);
  });

  it('reads the statuses of the brief, Retry-After included', () => {
    const behaviour = parseBehaviour({
      statuses: [
        { status: 503, share: 0.2 },
        { status: 429, share: 0.1, retryAfter: '1' },
      ],
    });
    expect(behaviour.statuses).toEqual([
      { status: 503, share: 0.2, retryAfter: null },
      { status: 429, share: 0.1, retryAfter: '1' },
    ]);
  });

  it('turns a Retry-After given in seconds into its header text', () => {
    expect(
      parseBehaviour({ statuses: [{ status: 429, share: 1, retryAfter: 30 }] }).statuses[0]?.retryAfter,
    ).toBe('30');
  });

  it('reads answerAtMs as a fixed latency', () => {
    expect(parseBehaviour({ answerAtMs: 252 }).latency).toEqual({ type: 'fixed', ms: 252 });
  });

  it('reads a mixture of a fixed base and a log-normal tail', () => {
    const latency = {
      type: 'mixture',
      base: { type: 'fixed', ms: 5 },
      tail: { type: 'lognormal', medianMs: 300, p99Ms: 900 },
      tailShare: 0.05,
    } as const;
    expect(parseBehaviour({ latency }).latency).toEqual(latency);
  });

  it('reads booleans as shares of all or nothing', () => {
    const behaviour = parseBehaviour({ hang: true, resetMidBody: false });
    expect(behaviour.hang).toBe(1);
    expect(behaviour.resetMidBody).toBe(0);
  });

  it('reads an I/O wait: a share of the requests answered later, holding no worker', () => {
    const behaviour = parseBehaviour({ ioWait: { share: 0.025, ms: 1000 } });
    expect(behaviour.ioWait).toEqual({ share: 0.025, ms: 1000 });
    expect(Object.isFrozen(behaviour.ioWait)).toBe(true);
    // One draw per request: below the share it waits, at or above it does not.
    expect(ioWaitMs(behaviour, 0.0249)).toBe(1000);
    expect(ioWaitMs(behaviour, 0.025)).toBe(0);
    expect(ioWaitMs(DEFAULT_BEHAVIOUR, 0)).toBe(0);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(parseBehaviour({ statuses: [{ status: 503, share: 0.5 }] }).statuses)).toBe(true);
  });

  it.each([
    [null, '`behaviour` must be an object'],
    [[], '`behaviour` must be an object'],
    [{ hnag: true }, 'unknown field `hnag`'],
    [{ hang: 2 }, '`hang` must be a number in [0, 1]'],
    [
      {
        statuses: [
          { status: 503, share: 0.2 },
          { status: 429, share: 2 },
        ],
      },
      '`statuses[1].share`',
    ],
    [{ statuses: [{ status: 99, share: 0.1 }] }, '`statuses[0].status` must be an integer in [200, 599]'],
    [{ statuses: [{ status: 503, share: 0.1, retryAfter: 'a\nb' }] }, '`statuses[0].retryAfter`'],
    [{ statuses: [{ status: 503, share: 0.1, why: 1 }] }, 'unknown field `statuses[0].why`'],
    [{ statuses: {} }, '`statuses` must be an array'],
    [{ latency: { type: 'gamma' } }, '`latency.type` must be "fixed", "lognormal" or "mixture"'],
    [{ latency: { type: 'lognormal', medianMs: 100, p99Ms: 50 } }, '`latency.p99Ms` (50) must be at least'],
    [{ latency: { type: 'lognormal', medianMs: 0, p99Ms: 50 } }, '`latency.medianMs` must be greater than 0'],
    [{ latency: { type: 'fixed', ms: -1 } }, '`latency.ms` must be a number of milliseconds'],
    [{ latency: { type: 'fixed', ms: 1, extra: 2 } }, 'unknown field `latency.extra`'],
    [
      { latency: { type: 'mixture', base: { type: 'fixed', ms: 1 }, tail: { type: 'x' }, tailShare: 0.1 } },
      '`latency.tail.type`',
    ],
    [{ latency: { type: 'fixed', ms: 1 }, answerAtMs: 5 }, '`latency` and `answerAtMs` are exclusive'],
    [{ hang: 0.6, statuses: [{ status: 503, share: 0.5 }] }, 'add up to 1.1'],
    [{ refuse: true, connectTimeout: true }, '`refuse` and `connectTimeout` are exclusive'],
    [{ refuse: 'yes' }, '`refuse` must be a boolean'],
    [{ bodyBytes: 1.5 }, '`bodyBytes` must be an integer'],
    [{ slowBodyMs: Number.POSITIVE_INFINITY }, '`slowBodyMs` must be a number of milliseconds'],
    [{ ioWait: 0.1 }, '`ioWait` must be an object { share, ms }'],
    [{ ioWait: { share: 0.1 } }, '`ioWait` needs both `share` and `ms`'],
    [{ ioWait: { share: true, ms: 10 } }, '`ioWait.share` must be a number in [0, 1], got true'],
    [{ ioWait: { share: 0.1, ms: -5 } }, '`ioWait.ms` must be a number of milliseconds'],
    [{ ioWait: { share: 0.1, ms: 5, every: 2 } }, 'unknown field `ioWait.every`'],
  ])('rejects %j naming the field', (input, fragment) => {
    const message = messageOf(input);
    expect(message).toContain(fragment);
    expect(message.startsWith('behaviour: ')).toBe(true);
  });

  it('rejects mixtures nested too deep instead of recursing without end', () => {
    let latency: unknown = { type: 'fixed', ms: 1 };
    for (let i = 0; i < 10; i++) latency = { type: 'mixture', base: latency, tail: latency, tailShare: 0.5 };
    expect(messageOf({ latency })).toContain('nests mixtures deeper than');
  });

  it('accepts shares that add up to 1 despite rounding', () => {
    expect(() =>
      parseBehaviour({
        hang: 0.1,
        statuses: [
          { status: 503, share: 0.2 },
          { status: 500, share: 0.7 },
        ],
      }),
    ).not.toThrow();
  });

  // Arbitrary and hostile input (10 000 runs, JSON round trip): lab/test/fuzz/lab-admin.test.ts.
});

describe('parseBehaviour and negative zero', () => {
  it('reads -0 as 0 so a behaviour survives a JSON round trip (found by the property test)', () => {
    for (const input of [{ resetMidBody: -0 }, { latency: { type: 'fixed', ms: -0 } }]) {
      const behaviour = parseBehaviour(input);
      expect(parseBehaviour(JSON.parse(JSON.stringify(behaviour)))).toEqual(behaviour);
    }
  });
});

describe('parseBehaviourJson', () => {
  it('reads JSON text', () => {
    expect(parseBehaviourJson('{"hang":true}').hang).toBe(1);
  });

  it('says when the text is not JSON', () => {
    expect(() => parseBehaviourJson('{hang')).toThrow(/behaviour: not valid JSON/);
  });
});

describe('pickOutcome', () => {
  const behaviour = parseBehaviour({
    resetBeforeHeaders: 0.1,
    hang: 0.1,
    statuses: [
      { status: 503, share: 0.2 },
      { status: 429, share: 0.1, retryAfter: '1' },
    ],
    resetMidBody: 0.1,
  });

  it.each([
    [0, 'resetBeforeHeaders'],
    [0.15, 'hang'],
    [0.25, 'status 503'],
    [0.45, 'status 429'],
    [0.55, 'resetMidBody'],
    [0.65, 'ok'],
    [0.999, 'ok'],
  ])('lays the shares end to end: a draw of %d gives %s', (u, expected) => {
    const outcome = pickOutcome(behaviour, u);
    expect(outcome.kind === 'status' ? `status ${outcome.status}` : outcome.kind).toBe(expected);
  });

  it('passes the Retry-After of the chosen status along', () => {
    expect(pickOutcome(behaviour, 0.45)).toEqual({ kind: 'status', status: 429, retryAfter: '1' });
  });

  it('always answers 200 with the default behaviour', () => {
    expect(pickOutcome(DEFAULT_BEHAVIOUR, 0).kind).toBe('ok');
  });
});
