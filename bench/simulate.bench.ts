/**
 * Incident simulator: how long 10 minutes of a 1 000 rps service take to simulate, per strategy.
 *
 *   node --import tsx bench/simulate.bench.ts [--json]
 *
 * There is no peer simulator to compare with, so the figures are absolute: wall time and CPU time of
 * the process for one `simulateAmplification` run (the default scenario stretched to 600 s), and the
 * events per CPU second. Each strategy runs in-process after one discarded 60 s warm-up run; the
 * median of three rounds is reported. CPU time is the steadier figure on a shared machine.
 */
import { loadavg } from 'node:os';
import { type StrategyName, simulateAmplification } from '@prazo/lab';

const json = process.argv.includes('--json');
const rows: Array<{
  strategies: string;
  events: number;
  wallMs: number;
  cpuMs: number;
  eventsPerCpuSecond: number;
}> = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const strategies of [
  ['prazo'],
  ['naive'],
  ['naive', 'backoff', 'budget', 'prazo'],
] as StrategyName[][]) {
  simulateAmplification({ durationMs: 60_000, strategies });
  const walls: number[] = [];
  const cpus: number[] = [];
  let events = 0;
  for (let round = 0; round < 3; round++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    events = simulateAmplification({ durationMs: 600_000, strategies }).events;
    walls.push(performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    cpus.push((cpu.user + cpu.system) / 1000);
  }
  const cpuMs = median(cpus);
  rows.push({
    strategies: strategies.join(','),
    events,
    wallMs: Math.round(median(walls)),
    cpuMs: Math.round(cpuMs),
    eventsPerCpuSecond: Math.round(events / (cpuMs / 1000)),
  });
}

if (json) console.log(JSON.stringify({ loadavg: loadavg()[0], rows }, null, 2));
else {
  console.log(`10 min of 1 000 rps (load average ${loadavg()[0]!.toFixed(1)})`);
  for (const r of rows)
    console.log(
      `${r.strategies.padEnd(28)} ${String(r.events).padStart(9)} events  wall ${(r.wallMs / 1000).toFixed(2)} s  cpu ${(r.cpuMs / 1000).toFixed(2)} s  ${(r.eventsPerCpuSecond / 1e6).toFixed(2)} M events/cpu-s`,
    );
}
