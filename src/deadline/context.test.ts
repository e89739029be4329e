import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { currentDeadline, withDeadline } from './context.js';
import { Deadline } from './deadline.js';

describe('ambient deadline', () => {
  const clock = createFakeClock(1_000);

  it('is absent outside withDeadline', () => {
    expect(currentDeadline()).toBeUndefined();
  });

  it('is visible across awaits inside withDeadline, and gone after', async () => {
    const deadline = Deadline.after(500, clock);
    const seen = await withDeadline(deadline, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return currentDeadline();
    });
    expect(seen).toBe(deadline);
    expect(currentDeadline()).toBeUndefined();
  });

  it('returns what the function returns', () => {
    expect(withDeadline(Deadline.after(1, clock), () => 42)).toBe(42);
  });

  it('lets a nested scope tighten the deadline but never extend it', () => {
    const outer = Deadline.after(500, clock);
    const tighter = Deadline.after(100, clock);
    const looser = Deadline.after(5000, clock);
    withDeadline(outer, () => {
      expect(withDeadline(tighter, currentDeadline)).toBe(tighter);
      expect(withDeadline(looser, currentDeadline)).toBe(outer);
      expect(currentDeadline()).toBe(outer);
    });
  });

  it('keeps concurrent scopes apart', async () => {
    const a = Deadline.after(100, clock);
    const b = Deadline.after(200, clock);
    const read = async (d: Deadline) =>
      withDeadline(d, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return currentDeadline();
      });
    expect(await Promise.all([read(a), read(b)])).toEqual([a, b]);
  });
});
