/**
 * Instance selection: nanoseconds per pick of the balancer (src/balancer/) with 3, 10 and 100
 * instances, in the steady state of a client: each pick is followed by the `finished()` of a call,
 * so in-flight counts, peak-EWMAs, outcome rings and share counters all move as they do in use.
 *
 *   node --expose-gc --import tsx bench/balancer.bench.ts [--json]
 *
 * Two figures per fleet size:
 * - `pick + finished`: one `pick()` and one `finished(…, 'success', latency)` — the whole cost the
 *   balancer adds to an attempt — in wall time and in CPU time of the process (which a shared,
 *   loaded machine disturbs less);
 * - `pick`: `pick()` alone, measured as 32 picks (32 calls in flight) then their 32 `finished()`,
 *   minus the finishes timed separately the same way; the target of the issue is ≤ 200 ns with 100.
 *
 * - bytes per pick + finished: how much the young generation grows over 10 000 of them right after
 *   a GC (no object is allocated per pick; what shows is numbers V8 boxes between functions it did
 *   not inline — each call of the random source, for one — reclaimed by the scavenger).
 *
 * Time and randomness are simulated (the clock advances 0.05 ms per call, the random source is the
 * lab's seeded generator), latencies cycle through a fixed table per instance (no allocation in the
 * loop). Median of five rounds of ≥ 200 ms each after two discarded warm-up rounds, timed with
 * `process.hrtime.bigint()`; each fleet size runs in its own child process so one size's JIT
 * feedback does not reach the next.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { createRandom } from '@prazo/lab/random';
import { createBalancer } from '../src/balancer/balancer.js';

const SIZES = [3, 10, 100];
const ROUNDS = 5;
const WARMUP_ROUNDS = 2;
const MIN_ROUND_NS = 200_000_000n;
const BATCH = 32;

interface Row {
  instances: number;
  pickAndFinishNs: number;
  /** The same in CPU time of the process (steadier than wall time on a shared machine). */
  pickAndFinishCpuNs: number;
  pickNs: number;
  finishNs: number;
  /** Young-generation bytes allocated per pick + finished (needs --expose-gc; else undefined). */
  bytesPerPick: number | undefined;
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function measure(instances: number): Row {
  const origins = Array.from({ length: instances }, (_, k) => `http://10.0.${k >> 8}.${k & 255}:8080`);
  const balancer = createBalancer(origins, { random: createRandom(7) });
  // Latency per instance: a base of 2–9 ms, plus a cycle of jitter.
  const latency = new Float64Array(instances * 8);
  for (let i = 0; i < latency.length; i++) latency[i] = 2 + ((i >> 3) % 8) + (i % 8) * 0.25;
  let now = 1_764_000_000_000;
  let cycle = 0;
  const picked = new Int32Array(BATCH);

  const pairs = (): { wall: number; cpu: number } => {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    let n = 0;
    let elapsed = 0n;
    while (elapsed < MIN_ROUND_NS) {
      for (let k = 0; k < 4096; k++) {
        const i = balancer.pick(now);
        now += 0.05;
        balancer.finished(i, 'success', latency[(i << 3) | (cycle++ & 7)]!, now);
      }
      n += 4096;
      elapsed = process.hrtime.bigint() - start;
    }
    const cpu = process.cpuUsage(cpuStart);
    return { wall: Number(elapsed) / n, cpu: ((cpu.user + cpu.system) * 1000) / n };
  };

  // Picks and finishes of batches of 32 calls in flight, timed apart.
  const batches = (): { pick: number; finish: number } => {
    let pickNs = 0n;
    let finishNs = 0n;
    let n = 0;
    while (pickNs + finishNs < MIN_ROUND_NS) {
      for (let r = 0; r < 128; r++) {
        const t0 = process.hrtime.bigint();
        for (let k = 0; k < BATCH; k++) picked[k] = balancer.pick(now);
        const t1 = process.hrtime.bigint();
        now += 0.05 * BATCH;
        for (let k = 0; k < BATCH; k++) {
          const i = picked[k]!;
          balancer.finished(i, 'success', latency[(i << 3) | (cycle++ & 7)]!, now);
        }
        const t2 = process.hrtime.bigint();
        pickNs += t1 - t0;
        finishNs += t2 - t1;
      }
      n += 128 * BATCH;
    }
    return { pick: Number(pickNs) / n, finish: Number(finishNs) / n };
  };

  for (let r = 0; r < WARMUP_ROUNDS; r++) {
    pairs();
    batches();
  }
  const both: number[] = [];
  const bothCpu: number[] = [];
  const pick: number[] = [];
  const finish: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = pairs();
    both.push(p.wall);
    bothCpu.push(p.cpu);
    const b = batches();
    pick.push(b.pick);
    finish.push(b.finish);
  }
  // Bytes per pick + finished: growth of the young generation over 10 000 of them after a GC
  // (no scavenge fits in between), median of seven.
  let bytesPerPick: number | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    const newSpace = () =>
      getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_used_size ?? 0;
    const bytes: number[] = [];
    for (let r = 0; r < 7; r++) {
      gc();
      const before = newSpace();
      // The time lives in a typed array here, so that the loop itself boxes no number.
      const time = new Float64Array([now]);
      for (let k = 0; k < 10_000; k++) {
        const i = balancer.pick(time[0]!);
        time[0] = time[0]! + 0.05;
        balancer.finished(i, 'success', latency[(i << 3) | (cycle++ & 7)]!, time[0]!);
      }
      now = time[0]!;
      bytes.push((newSpace() - before) / 10_000);
    }
    bytesPerPick = median(bytes);
  }
  return {
    instances,
    bytesPerPick,
    pickAndFinishNs: median(both),
    pickAndFinishCpuNs: median(bothCpu),
    pickNs: median(pick),
    finishNs: median(finish),
  };
}

const at = process.argv.indexOf('--child');
if (at >= 0) {
  process.stdout.write(JSON.stringify(measure(Number(process.argv[at + 1]))));
} else {
  const self = fileURLToPath(import.meta.url);
  const rows: Row[] = SIZES.map(
    (n) =>
      JSON.parse(
        execFileSync(process.execPath, [...process.execArgv, self, '--child', String(n)], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      ) as Row,
  );
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify(
        { node: process.version, loadavg: loadavg(), date: new Date().toISOString(), rows },
        null,
        2,
      ),
    );
  } else {
    const load = loadavg().map((x) => x.toFixed(1));
    console.log(
      `Node ${process.version}, ${cpus().length} CPUs, load average ${load.join(' ')}, ${new Date().toISOString()}`,
    );
    console.log(
      '| instances | pick + finished, wall (ns) | pick + finished, CPU (ns) | pick alone, 32 in flight (ns) | finished alone (ns) | bytes per pick + finished |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.instances} | ${r.pickAndFinishNs.toFixed(0)} | ${r.pickAndFinishCpuNs.toFixed(0)} | ${r.pickNs.toFixed(0)} | ${r.finishNs.toFixed(0)} | ${r.bytesPerPick === undefined ? 'run with --expose-gc' : r.bytesPerPick.toFixed(0)} |`,
      );
  }
}
