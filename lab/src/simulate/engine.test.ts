import { describe, expect, it } from 'vitest';
import { createSimulation } from './engine.js';

describe('createSimulation', () => {
  it('runs events in time order, and events due at the same instant in the order they were scheduled', () => {
    const sim = createSimulation();
    const seen: string[] = [];
    sim.at(30, () => seen.push('c'));
    sim.at(10, () => seen.push('a1'));
    sim.at(20, () => seen.push('b'));
    sim.at(10, () => seen.push('a2'));
    sim.at(10, () => seen.push('a3'));
    sim.run(100);
    expect(seen).toEqual(['a1', 'a2', 'a3', 'b', 'c']);
  });

  it('moves its clock to each event, so components given the clock read virtual time', () => {
    const sim = createSimulation(1_000);
    const times: number[] = [];
    sim.after(5, () => {
      times.push(sim.clock.now());
      sim.after(7, () => times.push(sim.clock.now()));
    });
    sim.run(2_000);
    expect(times).toEqual([1_005, 1_012]);
    expect(sim.now()).toBe(2_000);
  });

  it('skips cancelled events and stops at the horizon, keeping later events queued', () => {
    const sim = createSimulation();
    const seen: number[] = [];
    const cancelled = sim.at(5, () => seen.push(5));
    sim.at(6, () => seen.push(6));
    sim.at(50, () => seen.push(50));
    sim.cancel(cancelled);
    sim.run(10);
    expect(seen).toEqual([6]);
    expect(sim.processed()).toBe(1);
    expect(sim.pending()).toBe(1);
    sim.run(100);
    expect(seen).toEqual([6, 50]);
  });

  it('never schedules into the past: an event for an earlier time runs now', () => {
    const sim = createSimulation();
    const seen: number[] = [];
    sim.at(10, () => sim.at(3, () => seen.push(sim.now())));
    sim.run(20);
    expect(seen).toEqual([10]);
  });

  it('keeps heap order over many random events', () => {
    const sim = createSimulation();
    const times: number[] = [];
    let x = 7;
    for (let i = 0; i < 5_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      const t = x % 1_000;
      sim.at(t, () => times.push(t));
    }
    sim.run(1_000);
    expect(times).toHaveLength(5_000);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('turns timers armed through its clock into events, and cancels them through it', () => {
    const sim = createSimulation();
    const seen: number[] = [];
    sim.clock.setTimeout(() => seen.push(sim.clock.now()), 30).unref();
    const cancelled = sim.clock.setTimeout(() => seen.push(-1), 10);
    sim.clock.clearTimeout(cancelled);
    sim.run(100);
    expect(seen).toEqual([30]);
  });

  it('reports progress while it runs', () => {
    const sim = createSimulation();
    for (let i = 0; i < 10; i++) sim.at(i, () => {});
    const calls: number[] = [];
    sim.run(100, (now) => calls.push(now), 3);
    expect(calls).toEqual([2, 5, 8]);
  });
});
