import { formatMs } from '@prazo/cli-kit/format';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../deadline/context.js';
import { Deadline } from '../deadline/deadline.js';
import { HopTally, withHopTally } from '../deadline/hop-tally.js';
import type { DependencyEvents } from '../engine/events.js';
import { isPrazoError } from '../errors.js';
import {
  advance,
  createTestDependency,
  flush,
  TEST_START_MS as START,
  settle,
} from '../testing/test-dependency.js';
import { describeLedger, type LedgerAttempt } from './ledger.js';

describe('the deadline ledger of a call', () => {
  it('accounts for a healthy call: one attempt, its connect and first-byte phases, the time left', async () => {
    const { dep, clock, transport } = createTestDependency();
    const pending = dep.request({ path: '/stock', deadline: 800 });
    clock.advance(3);
    transport.exchanges[0]!.written();
    clock.advance(17);
    transport.exchanges[0]!.respond(200);
    const res = await pending;
    const ledger = res.ledger;
    expect(ledger.dependency).toBe('inventory');
    expect(ledger.budgetMs).toBe(800);
    expect(ledger.elapsedMs).toBe(20);
    expect(ledger.hereMs).toBe(0);
    expect(ledger.queuedMs).toBe(0);
    expect(ledger.entries).toEqual([
      {
        kind: 'attempt',
        attempt: 1,
        attemptKind: 'original',
        instance: 'http://10.0.0.1',
        atMs: 0,
        durationMs: 20,
        leftMs: 800,
        outcome: 'success',
        status: 200,
        connectMs: 3,
        firstByteMs: 17,
        bodyMs: undefined,
        remote: null,
        ignored: null,
      },
    ]);
    expect(ledger.summary()).toBe('20 ms: 0 ms here, 20 ms in inventory');
    await res.body.dump();
    await dep.close();
  });

  it('puts the backoff between two attempts in order, with the time left at each step', async () => {
    const { dep, clock, transport } = createTestDependency();
    const pending = settle(dep.request({ path: '/stock' }));
    clock.advance(10);
    transport.exchanges[0]!.respond(503);
    await flush();
    for (let i = 0; i < 100 && transport.exchanges.length < 2; i++) await advance(clock, 5, 5);
    expect(transport.exchanges).toHaveLength(2);
    clock.advance(30);
    transport.exchanges[1]!.respond(200);
    const res = (await pending).value!;
    const kinds = res.ledger.entries.map((e) => e.kind);
    expect(kinds).toEqual(['attempt', 'backoff', 'attempt']);
    const [first, wait, second] = res.ledger.entries as [LedgerAttempt, LedgerAttempt, LedgerAttempt];
    expect(first.status).toBe(503);
    expect(wait.atMs).toBe(10);
    expect(second.atMs).toBe(wait.atMs + wait.durationMs);
    expect(second.leftMs).toBe(1_000 - second.atMs);
    // Everything between start and end is accounted for.
    expect(res.ledger.hereMs).toBe(wait.durationMs);
    expect(res.ledger.elapsedMs).toBe(first.durationMs + wait.durationMs + second.durationMs);
    expect(res.ledger.summary()).toMatch(
      /ms here \(\d+ ms between attempts\), 40 ms in inventory over 2 attempts$/,
    );
    await dep.close();
  });

  it("shows a hedge copy's delay and counts overlapping copies once", async () => {
    const { dep, clock, transport } = createTestDependency({ hedge: { at: 'p95' } });
    const pending = dep.request({ path: '/stock' });
    await advance(clock, 60);
    expect(transport.exchanges).toHaveLength(2);
    clock.advance(5);
    transport.exchanges[1]!.respond(200);
    const res = await pending;
    const entries = res.ledger.entries;
    expect(entries.map((e) => e.kind)).toEqual(['attempt', 'hedge-delay', 'attempt']);
    expect(entries[1]!.durationMs).toBe((entries[2] as LedgerAttempt).atMs);
    expect(res.ledger.hereMs).toBe(0);
    expect(res.ledger.elapsedMs).toBe(65);
    await dep.close();
  });

  it('folds the dependency’s Server-Timing into the attempt, down its chain', async () => {
    const { dep, clock, transport } = createTestDependency({
      latency: { p99Ms: 1_500, p95Ms: 1_000 },
      userDeadlineMs: 5_000,
    });
    const pending = dep.request({ path: '/stock' });
    clock.advance(1_850);
    transport.exchanges[0]!.respond(200, {
      'server-timing':
        'prazo-left;dur=1890, prazo-queue;dur=2, prazo-handler;dur=1840, prazo-wait;desc=supplier;dur=1700, ' +
        'prazo-handler;desc=supplier;dur=1690, cache;desc="hit";dur=0.2',
    });
    const res = await pending;
    const attempt = res.ledger.entries[0] as LedgerAttempt;
    expect(attempt.remote).toEqual({
      leftMs: 1890,
      queuedMs: 2,
      handlerMs: 1840,
      dependencies: [
        {
          name: 'supplier',
          waitedMs: 1700,
          hop: { leftMs: undefined, queuedMs: undefined, handlerMs: 1690, dependencies: [] },
        },
      ],
    });
    expect(attempt.ignored).toBeNull();
    expect(res.ledger.summary()).toBe(
      '1 850 ms: 0 ms here, 1 850 ms in inventory, of which 1 700 ms waiting on supplier',
    );
    expect(res.ledger.shares()).toEqual([
      { kind: 'here', hop: '', ms: 0 },
      { kind: 'transit', hop: 'inventory', ms: 8 },
      { kind: 'queued', hop: 'inventory', ms: 2 },
      { kind: 'own', hop: 'inventory', ms: 140 },
      { kind: 'transit', hop: 'inventory>supplier', ms: 10 },
      { kind: 'own', hop: 'inventory>supplier', ms: 1690 },
    ]);
    await dep.close();
  });

  it('treats a hostile Server-Timing as one opaque interval, with the reason it was ignored', async () => {
    const { dep, clock, transport } = createTestDependency();
    const ignored: DependencyEvents['server-timing-ignored'][] = [];
    dep.on('server-timing-ignored', (e) => ignored.push(e));
    const pending = dep.request({ path: '/stock' });
    clock.advance(5);
    transport.exchanges[0]!.respond(200, { 'server-timing': `prazo-handler;dur=${'9'.repeat(5000)}` });
    const res = await pending;
    const attempt = res.ledger.entries[0] as LedgerAttempt;
    expect(attempt.remote).toBeNull();
    expect(attempt.ignored).toBe('too-long');
    expect(res.ledger.summary()).toBe('5 ms: 0 ms here, 5 ms in inventory');
    // Counted once per answer, however often the ledger is read.
    expect(ignored).toEqual([
      { dependency: 'inventory', attempt: 1, instance: 'http://10.0.0.1', reason: 'too-long' },
    ]);
    await dep.close();
  });

  it('rides on the error, and DEADLINE_EXCEEDED says in one line where the time went', async () => {
    const { dep, clock } = createTestDependency({ attempts: 1 });
    const pending = settle(dep.request({ path: '/slow', deadline: 120 }));
    await advance(clock, 200);
    const error = (await pending).error;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    const ledger = (error as { ledger: { elapsedMs: number; entries: unknown[] } }).ledger;
    expect(ledger.elapsedMs).toBeGreaterThanOrEqual(120);
    expect(ledger.entries).toHaveLength(1);
    expect((error as Error).message).toMatch(
      /Where the time went: 12\d ms: \d+ ms here, 12\d ms in inventory \(no answer\)\.$/,
    );
    await dep.close();
  });

  it('is on request-end, the same object as on the response', async () => {
    const { dep, clock, transport } = createTestDependency();
    const ends: DependencyEvents['request-end'][] = [];
    const attemptEnds: DependencyEvents['attempt-end'][] = [];
    dep.on('request-end', (e) => ends.push(e));
    dep.on('attempt-end', (e) => attemptEnds.push(e));
    const pending = dep.request({ path: '/stock', deadline: { limitMs: START + 500 } });
    transport.exchanges[0]!.written();
    clock.advance(4);
    transport.exchanges[0]!.respond(200);
    const res = await pending;
    expect(ends[0]!.ledger).toBe(res.ledger);
    expect(attemptEnds[0]).toMatchObject({ leftMs: 500, connectMs: 0 });
    await dep.close();
  });
});

describe('deadline errors that say where the time went', () => {
  it('DEADLINE_INSUFFICIENT inside a served request: what the request spent before this call', async () => {
    const { dep, clock } = createTestDependency({ latency: { p99Ms: 250, p95Ms: 200 } });
    const tally = new HopTally(clock, START, 1_900);
    clock.advance(12);
    tally.handlerStarted();
    tally.begin('supplier', START + 12);
    clock.advance(1_700);
    tally.end('supplier', START + 1_712, null);
    clock.advance(88);
    const deadline = Deadline.at(START + 1_900, clock);
    const error = await withHopTally(tally, () =>
      withDeadline(deadline, () => dep.request({ path: '/stock' }).catch((e: unknown) => e)),
    );
    expect(isPrazoError(error, 'DEADLINE_INSUFFICIENT')).toBe(true);
    expect((error as Error).message).toBe(
      'Deadline too short for inventory: 100 ms left, its p99 needs 250 ms. Of the 1 900 ms left when the request arrived, 1 800 ms are gone: 12 ms queued, 1 700 ms waiting on supplier, 88 ms in this handler.',
    );
    await dep.close();
  });

  it("DEADLINE_EXCEEDED after an answer that carried the dependency's timing names its chain", async () => {
    const { dep, clock, transport } = createTestDependency({
      latency: { p99Ms: 400, p95Ms: 300 },
      userDeadlineMs: 1_900,
    });
    const pending = settle(dep.request({ path: '/stock', deadline: 1_000 }));
    clock.advance(450);
    transport.exchanges[0]!.respond(503, {
      'server-timing': 'prazo-handler;dur=445, prazo-wait;desc=supplier;dur=440',
    });
    await flush();
    for (let i = 0; i < 400 && transport.exchanges.length < 2; i++) await advance(clock, 5, 5);
    expect(transport.exchanges).toHaveLength(2);
    await advance(clock, 700);
    const error = (await pending).error as Error;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    expect(error.message).toMatch(
      /Where the time went: 1 0\d\d ms: \d+ ms here( \(\d+ ms between attempts\))?, \d+ ms in inventory over 2 attempts, of which 440 ms waiting on supplier\.$/,
    );
    await dep.close();
  });
});

describe('the ledger of a call that never started', () => {
  it('is empty, not an epoch long, when the dependency was closed before the call', async () => {
    const { dep } = createTestDependency();
    await dep.close();
    const error = (await settle(dep.request({ path: '/stock' }))).error as {
      code: string;
      ledger: { elapsedMs: number; entries: unknown[] };
    };
    expect(error.code).toBe('CANCELLED');
    expect(error.ledger.elapsedMs).toBe(0);
    expect(error.ledger.entries).toEqual([]);
  });
});

describe('formatMs and describeLedger', () => {
  it('groups thousands with a space and rounds to the millisecond', () => {
    expect(formatMs(1900)).toBe('1 900 ms');
    expect(formatMs(12.4)).toBe('12 ms');
    expect(formatMs(1_234_567)).toBe('1 234 567 ms');
    expect(formatMs(-1500)).toBe('-1 500 ms');
  });

  it('says when no attempt was sent', () => {
    expect(
      describeLedger({
        dependency: 'supplier',
        budgetMs: 100,
        elapsedMs: 40,
        queuedMs: 40,
        hereMs: 40,
        entries: [{ kind: 'queue', atMs: 0, durationMs: 40, leftMs: 100 }],
        summary: () => '',
        shares: () => [],
      }),
    ).toBe('40 ms: 40 ms here (40 ms queued), no attempt sent to supplier');
  });
});
