import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { readHopTiming } from '../wire/server-timing.js';
import { currentHopTally, HopTally, withHopTally } from './hop-tally.js';

describe('the hop tally of a served request', () => {
  it('counts concurrent calls to dependencies once, and each dependency apart', () => {
    const clock = createFakeClock(1_000);
    const tally = new HopTally(clock, 1_000, 1_900);
    clock.advance(12);
    tally.handlerStarted();
    tally.begin('inventory', 1_020);
    tally.begin('pricing', 1_030);
    tally.end('pricing', 1_050, null);
    tally.end('inventory', 1_080, readHopTiming('prazo-handler;dur=55, prazo-wait;desc=supplier;dur=40').hop);
    tally.begin('inventory', 1_100);
    expect(tally.waitedMs(1_110)).toBe(60 + 10);
    tally.end('inventory', 1_120, null);
    expect(tally.timing(1_130)).toEqual({
      leftMs: 1_900,
      queuedMs: 12,
      handlerMs: 118,
      dependencies: [
        {
          name: 'inventory',
          waitedMs: 80,
          hop: {
            leftMs: undefined,
            queuedMs: undefined,
            handlerMs: 55,
            dependencies: [{ name: 'supplier', waitedMs: 40, hop: null }],
          },
        },
        { name: 'pricing', waitedMs: 20, hop: null },
      ],
    });
  });

  it('writes the chain, or only its own three metrics', () => {
    const clock = createFakeClock(0);
    const tally = new HopTally(clock, 0, 500);
    tally.begin('supplier', 5);
    expect(tally.header(25, true)).toBe(
      'prazo-left;dur=500, prazo-queue;dur=0, prazo-handler;dur=25, prazo-wait;desc=supplier;dur=20',
    );
    expect(tally.header(25, false)).toBe('prazo-left;dur=500, prazo-queue;dur=0, prazo-handler;dur=25');
    expect(readHopTiming(tally.header(30, true)).hop?.dependencies[0]?.waitedMs).toBe(25);
  });

  it('ignores an end it never saw begin; a dependency that said nothing is one opaque wait', () => {
    const clock = createFakeClock(0);
    const tally = new HopTally(clock, 0, 100);
    tally.end('ghost', 10, null);
    tally.begin('x', 10);
    tally.end('x', 20, readHopTiming(`prazo-handler;dur=${'1'.repeat(10_000)}`).hop);
    expect(tally.waitedMs(30)).toBe(10);
    expect(tally.timing(30).dependencies).toEqual([{ name: 'x', waitedMs: 10, hop: null }]);
  });

  it('is reachable only inside withHopTally', async () => {
    const tally = new HopTally(createFakeClock(0), 0, 100);
    expect(currentHopTally()).toBeUndefined();
    await withHopTally(tally, async () => {
      await Promise.resolve();
      expect(currentHopTally()).toBe(tally);
    });
    expect(currentHopTally()).toBeUndefined();
  });
});
