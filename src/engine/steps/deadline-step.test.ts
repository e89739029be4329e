import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../deadline/context.js';
import { Deadline } from '../../deadline/deadline.js';
import { createTestDependency, TEST_START_MS as START } from '../../testing/test-dependency.js';

describe('deadline step: deadlines only tighten', () => {
  it('sends the ambient limit when an explicit deadline is later (an explicit deadline never extends the ambient one)', async () => {
    const { dep, clock, transport } = createTestDependency({ localMaxMs: 5_000 }, (e) => e.respond(200));
    await withDeadline(Deadline.at(START + 300, clock), () =>
      dep.request({ path: '/', deadline: Deadline.after(2_000, clock) }),
    );
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(START + 300));
    await dep.close();
  });

  it('sends the explicit limit when it is earlier than the ambient one', async () => {
    const { dep, clock, transport } = createTestDependency({}, (e) => e.respond(200));
    await withDeadline(Deadline.at(START + 900, clock), () =>
      dep.request({ path: '/', deadline: { limitMs: START + 400 } }),
    );
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(START + 400));
    await dep.close();
  });

  it('caps an ambient limit beyond localMaxMs', async () => {
    const { dep, clock, transport } = createTestDependency({ localMaxMs: 500 }, (e) => e.respond(200));
    await withDeadline(Deadline.at(START + 60_000, clock), () => dep.request({ path: '/' }));
    expect(transport.exchanges[0]!.headers['x-deadline-epoch-ms']).toBe(String(START + 500));
    await dep.close();
  });
});

describe('deadline step: an unusable explicit limit is a typed error', () => {
  it.each([
    ['NaN', Number.NaN],
    ['a numeric string', String(START + 500)],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])(
    'rejects a deadline whose limitMs is %s with INVALID_OPTION, sending nothing',
    async (_name, limitMs) => {
      const { dep, transport } = createTestDependency({}, (e) => e.respond(200));
      await expect(
        dep.request({ path: '/', deadline: { limitMs } as { limitMs: number } }),
      ).rejects.toMatchObject({ code: 'INVALID_OPTION', option: 'deadline.limitMs' });
      expect(transport.exchanges).toHaveLength(0);
      await dep.close();
    },
  );
});
