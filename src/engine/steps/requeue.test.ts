import { createRandom } from '@prazo/lab/random';
import { describe, expect, it } from 'vitest';
import { createTestDependency, settle } from '../../testing/test-dependency.js';
import { instanceOutcomeOfAttempt } from '../instance-report.js';
import { mayRequeue, normalizeRequeueOptions, REQUEUE_DEFAULTS } from './requeue.js';

const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const THREE = ['http://10.0.0.1:8080', 'http://10.0.0.2:8080', 'http://10.0.0.3:8080'];

describe('mayRequeue', () => {
  const o = normalizeRequeueOptions(undefined);
  it('requeues a never-written attempt while the call has requeues, other instances and time left', () => {
    expect(mayRequeue(o, true, true, 0, 3, 500, 100)).toBe(true);
    expect(mayRequeue(o, true, true, 2, 3, 500, 100)).toBe(false); // no other instance left to try
    expect(mayRequeue(o, true, true, 0, 1, 500, 100)).toBe(false); // a single instance
    expect(mayRequeue(o, true, true, 0, 3, 99, 100)).toBe(false); // the deadline cannot hold a p99
  });

  it('never requeues what may have been written, a stream body, or with requeues off', () => {
    expect(mayRequeue(o, false, true, 0, 3, 500, 100)).toBe(false);
    expect(mayRequeue(o, true, false, 0, 3, 500, 100)).toBe(false);
    expect(mayRequeue(false, true, true, 0, 3, 500, 100)).toBe(false);
  });

  it('bounds requeues per call by maxPerCall', () => {
    const one = normalizeRequeueOptions({ maxPerCall: 1 });
    expect(mayRequeue(one, true, true, 1, 10, 500, 100)).toBe(false);
  });
});

describe('normalizeRequeueOptions', () => {
  it('applies the defaults and keeps false', () => {
    expect(normalizeRequeueOptions({})).toEqual({ ...REQUEUE_DEFAULTS });
    expect(normalizeRequeueOptions(false)).toBe(false);
  });

  it.each([
    [{ maxPerCall: 1.5 }, 'requeue.maxPerCall'],
    [{ maxRatio: 2 }, 'requeue.maxRatio'],
    [{ minPerSecond: -1 }, 'requeue.minPerSecond'],
    [{ windowMs: 0 }, 'requeue.windowMs'],
    ['yes', 'requeue'],
  ])('refuses %j naming %s', (options, option) => {
    expect(() => normalizeRequeueOptions(options as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option }),
    );
  });
});

describe('instanceOutcomeOfAttempt', () => {
  const c = (phase: 'connect' | 'read' | 'response', reason: string) => ({
    retry: true,
    phase,
    reason,
    anotherInstance: false,
  });
  it('reads answers by status and errors by phase, timeout and cause', () => {
    expect(instanceOutcomeOfAttempt(200, null, undefined, false, false)).toBe('success');
    expect(instanceOutcomeOfAttempt(503, null, undefined, false, false)).toBe('gateway');
    expect(instanceOutcomeOfAttempt(0, c('connect', 'connect-refused'), undefined, false, false)).toBe(
      'refused',
    );
    expect(instanceOutcomeOfAttempt(0, c('connect', 'connect-timeout'), 'connect', false, false)).toBe(
      'refused',
    );
    expect(instanceOutcomeOfAttempt(0, c('read', 'read-timeout'), 'read', false, false)).toBe('timeout');
    expect(instanceOutcomeOfAttempt(0, c('read', 'not-idempotent'), 'read', false, false)).toBe('timeout');
    expect(instanceOutcomeOfAttempt(0, c('read', 'read-reset'), undefined, false, false)).toBe('gateway');
    expect(instanceOutcomeOfAttempt(0, c('read', 'unknown-error'), undefined, false, false)).toBe('error');
  });

  it('holds nothing against an instance for prazo’s own cuts, the caller’s, or the deadline', () => {
    expect(instanceOutcomeOfAttempt(0, c('read', 'cancelled'), undefined, true, false)).toBe('neutral');
    expect(instanceOutcomeOfAttempt(0, c('read', 'deadline-exceeded'), undefined, false, true)).toBe(
      'neutral',
    );
    expect(instanceOutcomeOfAttempt(0, c('read', 'read-timeout'), 'read', false, true)).toBe('neutral');
  });
});

describe('requeue in the retry step', () => {
  it('moves a refused POST to another instance without using the caller’s one attempt', async () => {
    const { dep, transport } = createTestDependency(
      { origins: THREE, attempts: 1, random: createRandom(3) },
      (e) => (e.origin === THREE[0] ? e.fail(refused) : e.respond(200)),
    );
    try {
      for (let i = 0; i < 30; i++) {
        const { value, error } = await settle(dep.request({ method: 'POST', path: '/', body: 'x' }));
        expect(error).toBeUndefined();
        await value?.body.dump();
      }
      const sent = transport.exchanges.filter((e) => e.origin !== THREE[0]);
      expect(sent).toHaveLength(30);
      // The refusing instance was tried (first, while its latency was unknown) and the call moved on.
      expect(transport.exchanges.length).toBeGreaterThan(30);
    } finally {
      await dep.close();
    }
  });

  it('never requeues a POST that may have reached the server', async () => {
    const { dep, transport } = createTestDependency({ origins: THREE, attempts: 3 }, (e) => e.fail(reset));
    try {
      const { error } = await settle(dep.request({ method: 'POST', path: '/', body: 'x' }));
      expect(error).toMatchObject({ code: 'REQUEST_FAILED' });
      expect(transport.exchanges).toHaveLength(1);
    } finally {
      await dep.close();
    }
  });

  it('stops at the requeue budget, then treats a refusal as an ordinary retry', async () => {
    // Every instance refuses; the budget's floor is 0 and its ratio 0: no requeue at all.
    const { dep, transport } = createTestDependency(
      { origins: THREE, attempts: 1, requeue: { maxRatio: 0, minPerSecond: 0 } },
      (e) => e.fail(refused),
    );
    try {
      const { error } = await settle(dep.request({ path: '/' }));
      expect(error).toMatchObject({ code: 'REQUEST_FAILED' });
      expect(transport.exchanges).toHaveLength(1);
    } finally {
      await dep.close();
    }
  });

  it('tries each other instance at most once per call when every one refuses', async () => {
    const { dep, transport } = createTestDependency({ origins: THREE, attempts: 1 }, (e) => e.fail(refused));
    try {
      const { error } = await settle(dep.request({ method: 'POST', path: '/', body: 'x' }));
      expect(error).toMatchObject({ code: 'REQUEST_FAILED' });
      expect(new Set(transport.exchanges.map((e) => e.origin)).size).toBe(3);
      expect(transport.exchanges).toHaveLength(3);
    } finally {
      await dep.close();
    }
  });
});
