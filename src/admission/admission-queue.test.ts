import { describe, expect, it } from 'vitest';
import type { Criticality } from '../wire/criticality-header.js';
import { AdmissionQueue } from './admission-queue.js';

interface Item {
  name: string;
  criticality: Criticality;
  enqueuedAt: number;
}

const item = (name: string, enqueuedAt: number, criticality: Criticality = 'default'): Item => ({
  name,
  criticality,
  enqueuedAt,
});

function queue(): AdmissionQueue<Item> {
  const q = new AdmissionQueue<Item>(5, 100);
  q.advance(0);
  return q;
}

const names = (items: Array<Item | undefined>) => items.map((i) => i?.name);

describe('AdmissionQueue', () => {
  it('serves first in, first out while calm', () => {
    const q = queue();
    q.push(item('a', 0), 10);
    q.push(item('b', 1), 10);
    const dropped: Item[] = [];
    expect(names([q.take(2, dropped), q.take(3, dropped), q.take(4, dropped)])).toEqual([
      'a',
      'b',
      undefined,
    ]);
    expect(dropped).toEqual([]);
    expect(q.length).toBe(0);
  });

  it('serves the most critical lane first', () => {
    const q = queue();
    q.push(item('shed', 0, 'sheddable'), 10);
    q.push(item('norm', 1), 10);
    q.push(item('crit', 2, 'critical'), 10);
    const dropped: Item[] = [];
    expect(names([q.take(3, dropped), q.take(3, dropped), q.take(3, dropped)])).toEqual([
      'crit',
      'norm',
      'shed',
    ]);
  });

  it('under a standing queue switches to LIFO and drops whatever waited longer than the target', () => {
    const q = queue();
    const dropped: Item[] = [];
    // A whole interval where nothing leaves faster than 20 ms: a standing queue.
    for (let t = 0; t < 100; t += 10) q.push(item(`w${t}`, t), 100);
    expect(q.take(30, dropped)?.name).toBe('w0'); // 30 ms sojourn, still FIFO
    expect(q.overloaded).toBe(false);
    q.push(item('fresh', 118), 100);
    const next = q.take(120, dropped);
    expect(q.overloaded).toBe(true);
    expect(next?.name).toBe('fresh');
    expect(names(dropped)).toEqual(['w10', 'w20', 'w30', 'w40', 'w50', 'w60', 'w70', 'w80', 'w90']);
    expect(q.length).toBe(0);
  });

  it('goes back to FIFO once an interval drains under the target', () => {
    const q = queue();
    const dropped: Item[] = [];
    q.push(item('old', 0), 10);
    q.take(50, dropped);
    q.push(item('x', 99), 10);
    q.take(100, dropped);
    expect(q.overloaded).toBe(true);
    q.push(item('a', 150), 10);
    q.push(item('b', 151), 10);
    expect(q.take(152, dropped)?.name).toBe('b'); // LIFO
    expect(q.take(153, dropped)?.name).toBe('a'); // 3 ms: under the target
    q.push(item('c', 210), 10);
    q.push(item('d', 211), 10);
    expect(q.take(212, dropped)?.name).toBe('c'); // the interval ending at 200 drained: FIFO again
    expect(q.overloaded).toBe(false);
  });

  it('counts a request that never waited as a zero sojourn', () => {
    const q = queue();
    const dropped: Item[] = [];
    q.push(item('slow', 0), 10);
    q.take(50, dropped);
    q.bypassed();
    q.advance(100);
    expect(q.overloaded).toBe(false);
  });

  it('makes room in a full queue by pushing out the newest of the least critical', () => {
    const q = queue();
    q.push(item('s1', 0, 'sheddable'), 3);
    q.push(item('s2', 1, 'sheddable'), 3);
    q.push(item('d', 2), 3);
    expect(q.push(item('c', 3, 'critical'), 3)?.name).toBe('s2');
    expect(q.length).toBe(3);
    expect(q.leastWaiting()).toBe('sheddable');
  });

  it('takes out a request whose deadline passed while it waited', () => {
    const q = queue();
    const a = item('a', 0);
    q.push(a, 10);
    q.push(item('b', 0), 10);
    expect(q.remove(a)).toBe(true);
    expect(q.remove(a)).toBe(false);
    expect(q.length).toBe(1);
    expect(q.take(1, [])?.name).toBe('b');
  });
});
