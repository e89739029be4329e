import { createFakeClock, isPrazoError } from 'prazo';
import { describe, expect, it } from 'vitest';
import { createSlotPool, type Release } from './slot-pool.js';

const held = async (pool: ReturnType<typeof createSlotPool>): Promise<Release> => {
  const slot = await pool.acquire();
  if (typeof slot === 'string') throw new Error(`expected a slot, got ${slot}`);
  return slot;
};

describe('createSlotPool', () => {
  it('hands out slots at once while some are free and counts the peak', async () => {
    const pool = createSlotPool({ size: 2, clock: createFakeClock() });
    const a = await held(pool);
    await held(pool);
    expect(pool.stats()).toMatchObject({ inUse: 2, waiting: 0, peakInUse: 2 });
    a();
    a(); // a second release is ignored
    expect(pool.stats().inUse).toBe(1);
    expect(pool.takePeak()).toBe(2);
    expect(pool.takePeak()).toBe(1);
  });

  it('queues a request until a slot is released, in arrival order', async () => {
    const pool = createSlotPool({ size: 1, clock: createFakeClock() });
    const first = await held(pool);
    const order: string[] = [];
    const b = pool.acquire().then((r) => order.push(`b:${typeof r}`));
    const c = pool.acquire().then((r) => order.push(`c:${typeof r}`));
    expect(pool.stats().waiting).toBe(2);
    first();
    await b;
    expect(order).toEqual(['b:function']);
    expect(pool.stats()).toMatchObject({ inUse: 1, waiting: 1 });
    void c;
  });

  it('rejects with acquire-timeout when no slot frees up in time', async () => {
    const clock = createFakeClock();
    const pool = createSlotPool({ size: 1, acquireTimeoutMs: 1000, clock });
    await held(pool);
    const waiting = pool.acquire();
    clock.advance(999);
    expect(pool.stats().waiting).toBe(1);
    clock.advance(1);
    await expect(waiting).resolves.toBe('acquire-timeout');
    expect(pool.stats()).toMatchObject({ waiting: 0, rejectedTimeout: 1 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects with queue-full beyond maxWaiting, without waiting', async () => {
    const pool = createSlotPool({ size: 1, maxWaiting: 1, clock: createFakeClock() });
    await held(pool);
    void pool.acquire();
    await expect(pool.acquire()).resolves.toBe('queue-full');
    expect(pool.stats().rejectedQueueFull).toBe(1);
  });

  it('drops a waiter whose caller went away and releases its timer', async () => {
    const clock = createFakeClock();
    const pool = createSlotPool({ size: 1, clock });
    await held(pool);
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBe('cancelled');
    expect(pool.stats().waiting).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('names the option it refuses', () => {
    try {
      createSlotPool({ size: 0 });
      expect.unreachable();
    } catch (error) {
      expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
      expect(String(error)).toContain('pool');
    }
  });
});
