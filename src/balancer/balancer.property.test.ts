import { createRandom } from '@prazo/lab/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBalancer } from './balancer.js';
import type { InstanceOutcome } from './instance-outcome.js';
import { maxEjected } from './outlier-rules.js';

const POOL = Array.from({ length: 8 }, (_, k) => `http://127.0.0.${k + 2}:8080`);
const OUTCOMES: InstanceOutcome[] = ['success', 'gateway', 'timeout', 'refused', 'error', 'neutral'];

const op = (membership: boolean) =>
  fc.oneof(
    fc.record({ kind: fc.constant('pick' as const) }),
    fc.record({ kind: fc.constant('retry' as const), of: fc.nat(20) }),
    fc.record({ kind: fc.constant('hedge' as const), of: fc.nat(20) }),
    fc.record({
      kind: fc.constant('finish' as const),
      which: fc.nat(1_000),
      outcome: fc.constantFrom(...OUTCOMES),
      latencyMs: fc.double({ min: 0, max: 2_000, noNaN: true }),
    }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.nat(50), fc.nat(40_000)) }),
    ...(membership
      ? [
          fc.record({ kind: fc.constant('add' as const), origin: fc.constantFrom(...POOL) }),
          fc.record({ kind: fc.constant('remove' as const), origin: fc.constantFrom(...POOL) }),
        ]
      : []),
  );

type Op = typeof op extends (m: boolean) => fc.Arbitrary<infer T> ? T : never;

function run(ops: Op[], seed: number, start: number, membership: boolean) {
  // The states the transitions report, replayed: they must always match the snapshot.
  const reported = new Map<string, string>(POOL.slice(0, start).map((o) => [o, 'up']));
  const balancer = createBalancer(POOL.slice(0, start), {
    random: createRandom(seed),
    onTransition: (t) => {
      expect(reported.get(t.origin) ?? 'absent').toBe(t.from);
      if (t.to === 'absent') reported.delete(t.origin);
      else reported.set(t.origin, t.to);
    },
  });
  let now = 1_000_000;
  const outstanding: number[] = [];
  const check = (i: number, before: ReturnType<typeof balancer.snapshot>) => {
    if (before.instances.filter((s) => s.state !== 'draining').length === 0) {
      expect(i).toBe(-1);
      return;
    }
    expect(i).toBeGreaterThanOrEqual(0);
    expect(before.instances.find((s) => s.index === i)?.state).not.toBe('draining');
    outstanding.push(i);
  };
  for (const o of ops) {
    const before = balancer.snapshot(now);
    const members = before.instances.filter((s) => s.state !== 'draining');
    if (o.kind === 'pick') check(balancer.pick(now), before);
    else if (o.kind === 'retry' || o.kind === 'hedge') {
      const from = members.length > 0 && o.of < 18 ? members[o.of % members.length]!.index : -1;
      if (o.kind === 'retry') {
        const i = balancer.pickRetry([from], now);
        check(i, before);
        // Never an instance known to refuse connections while another is up.
        if (members.some((s) => s.state === 'up' && s.index !== from))
          expect(before.instances.find((s) => s.index === i)?.state).not.toBe('down');
      } else {
        const i = balancer.pickHedge(from, now);
        if (from >= 0) expect(i).not.toBe(from);
        if (i >= 0) {
          expect(members.map((s) => s.index)).toContain(i);
          outstanding.push(i);
        }
      }
    } else if (o.kind === 'finish') {
      if (outstanding.length === 0) continue;
      const [i] = outstanding.splice(o.which % outstanding.length, 1);
      const draining = before.instances.find((s) => s.index === i)?.state === 'draining';
      const released = balancer.finished(i!, o.outcome, o.latencyMs, now);
      if (released) expect(draining && !outstanding.includes(i!)).toBe(true);
    } else if (o.kind === 'advance') now += o.ms;
    else if (o.kind === 'add') balancer.add(o.origin, now);
    else balancer.remove(o.origin, now);

    const after = balancer.snapshot(now);
    expect(new Map(after.instances.map((s) => [s.origin, s.state]))).toEqual(reported);
    for (const s of after.instances) expect(s.inFlight).toBe(outstanding.filter((i) => i === s.index).length);
    if (!membership) {
      const out = after.instances.filter((s) => s.state === 'ejected' || s.state === 'probing').length;
      expect(out).toBeLessThanOrEqual(maxEjected(after.instances.length, 0.5));
    }
  }
}

describe('Balancer properties', () => {
  it('picks a member, counts in flight exactly, never ejects more than half (at least one of two)', () => {
    fc.assert(
      fc.property(
        fc.array(op(false), { maxLength: 150 }),
        fc.nat(),
        fc.integer({ min: 1, max: 8 }),
        (ops, seed, n) => run(ops, seed, n, false),
      ),
      { numRuns: 300 },
    );
  });

  it('keeps picks on non-draining members and releases a drained slot once, across adds and removes', () => {
    fc.assert(
      fc.property(
        fc.array(op(true), { maxLength: 150 }),
        fc.nat(),
        fc.integer({ min: 0, max: 8 }),
        (ops, seed, n) => run(ops, seed, n, true),
      ),
      { numRuns: 300 },
    );
  });
});
