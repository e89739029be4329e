/**
 * Retry budget: operations per second and retained memory at 10, 1 000 and 100 000 simulated
 * requests per second over a full 10 s window, prazo's bucketed ring against the article's
 * array-based budget (bench/reference/article-retry-budget.ts) in the same run.
 *
 *   node --expose-gc --import tsx bench/retry-budget.bench.ts [--json]
 *
 * Each simulated request is one `recordOriginal()` and one `tryConsume()` (every request fails, the
 * worst case for the budget); an operation is one of those calls. Time is simulated (a clock
 * advanced by 1000 / rps ms per request), so the window holds exactly what it would hold in
 * production at that rate.
 *
 * - Retained memory: the exact retained size of a budget holding a full window, from a V8 heap
 *   snapshot (bench/retained-size.ts) — every object, array and typed-array backing store only the
 *   budget keeps alive. `process.memoryUsage()` deltas swing by ±300 KB here (JIT, lazy sweeping).
 * - ops/s: median of five rounds of the steady state (window full and sliding), each at least
 *   250 ms and 1 M requests (at most 1 s), timed with `process.hrtime.bigint()`, after two
 *   discarded warm-up rounds. Also per CPU-second of the process,
 *   which a shared, overloaded machine disturbs less than wall time.
 * - Each (implementation, rate) runs in its own child process, so neither implementation's JIT
 *   feedback or garbage leaks into the other's figures.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createRetryBudget } from '../src/policy/retry-budget.js';
import { createFakeClock } from '../src/testing/fake-clock.js';
import { createArticleRetryBudget } from './reference/article-retry-budget.js';
import { RetainedSizeProbe, retainedBytes } from './retained-size.js';

type Budget = {
  recordOriginal(): void;
  tryConsume(): boolean;
  state(): { originals: number; extras: number };
};

const RATES = [10, 1_000, 100_000];
const IMPLEMENTATIONS = ['prazo', 'article (reference)'] as const;
type Implementation = (typeof IMPLEMENTATIONS)[number];
const WINDOW_MS = 10_000;
const ROUNDS = 5;
// A round lasts at least 250 ms and 1 M requests (so the JIT has tiered up even on a starved
// machine), at most 1 s (the reference at 100 k rps manages a few thousand requests per second).
const MIN_ROUND_NS = 250_000_000n;
const MIN_ROUND_REQUESTS = 1_000_000;
const MAX_ROUND_NS = 1_000_000_000n;
const START_MS = 1_764_000_000_000;

interface Row {
  implementation: Implementation;
  rps: number;
  windowOriginals: number;
  windowExtras: number;
  retainedBytes: number;
  opsPerSecond: number;
  opsPerCpuSecond: number;
}

// The simulated clock lives at module level so that it is never counted in a budget's retained size.
const sim = { t: START_MS, now: () => sim.t };
const clock = { ...createFakeClock(), now: sim.now };

function create(name: Implementation): Budget {
  return name === 'prazo' ? createRetryBudget({ clock }) : createArticleRetryBudget({ now: sim.now });
}

/** A new budget holding one full window of traffic at `rps`; the probe is its only holder. */
function fillWindow(name: Implementation, rps: number): RetainedSizeProbe<Budget> {
  const budget = create(name);
  const stepMs = 1000 / rps;
  const requests = Math.round((WINDOW_MS / 1000) * rps);
  for (let i = 0; i < requests; i += 1) {
    sim.t += stepMs;
    budget.recordOriginal();
    budget.tryConsume();
  }
  return new RetainedSizeProbe(budget);
}

/** Median ops per wall second and per CPU second of the steady state: the window full and sliding. */
function measureOps(budget: Budget, rps: number, rounds = ROUNDS): { wall: number; cpu: number } {
  const stepMs = 1000 / rps;
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    let requests = 0;
    const cpuStart = process.cpuUsage();
    const startNs = process.hrtime.bigint();
    let elapsedNs = 0n;
    while ((elapsedNs < MIN_ROUND_NS || requests < MIN_ROUND_REQUESTS) && elapsedNs < MAX_ROUND_NS) {
      for (let i = 0; i < 1024; i += 1) {
        sim.t += stepMs;
        budget.recordOriginal();
        budget.tryConsume();
      }
      requests += 1024;
      elapsedNs = process.hrtime.bigint() - startNs;
    }
    const used = process.cpuUsage(cpuStart);
    wall.push((requests * 2) / (Number(elapsedNs) / 1e9));
    cpu.push((requests * 2) / ((used.user + used.system) / 1e6));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { wall: median(wall), cpu: median(cpu) };
}

async function child(name: Implementation, rps: number): Promise<Row> {
  // Warm-up: the same work once, discarded, so the measured pass runs optimised code.
  measureOps(fillWindow(name, rps).target, rps, 2);
  sim.t = START_MS;
  const probe = fillWindow(name, rps);
  // Measure in a later task: no stack slot of the filling code may still point at the budget.
  await new Promise((resolve) => setImmediate(resolve));
  const bytes = retainedBytes(probe);
  const window = probe.target.state();
  const ops = measureOps(probe.target, rps);
  return {
    implementation: name,
    rps,
    windowOriginals: window.originals,
    windowExtras: window.extras,
    retainedBytes: bytes,
    opsPerSecond: ops.wall,
    opsPerCpuSecond: ops.cpu,
  };
}

function parent(): void {
  const rows: Row[] = [];
  const self = fileURLToPath(import.meta.url);
  for (const rps of RATES) {
    for (const name of IMPLEMENTATIONS) {
      const out = execFileSync(process.execPath, [...process.execArgv, self, '--child', name, String(rps)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      rows.push(JSON.parse(out) as Row);
    }
  }

  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify(
        { node: process.version, loadavg: loadavg(), date: new Date().toISOString(), rows },
        null,
        2,
      ),
    );
    return;
  }
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
  const mops = (ops: number) => (ops >= 1e6 ? `${(ops / 1e6).toFixed(1)} M` : `${(ops / 1e3).toFixed(1)} k`);
  const load = loadavg().map((x) => x.toFixed(1));
  console.log(
    `Node ${process.version}, ${cpus().length} CPUs, load average ${load.join(' ')}, ${new Date().toISOString()}`,
  );
  console.log(
    '| implementation | simulated rps | originals / extras in window | retained memory | ops/s (wall) | ops per CPU-second |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.implementation} | ${r.rps.toLocaleString('en')} | ${r.windowOriginals.toLocaleString('en')} / ${r.windowExtras.toLocaleString('en')} | ${kb(r.retainedBytes)} (${r.retainedBytes.toLocaleString('en')} B) | ${mops(r.opsPerSecond)} | ${mops(r.opsPerCpuSecond)} |`,
    );
  }
  const ours = (rps: number) => rows.find((r) => r.rps === rps && r.implementation === 'prazo')!;
  const ref = (rps: number) => rows.find((r) => r.rps === rps && r.implementation !== 'prazo')!;
  for (const rps of RATES) {
    console.log(
      `${rps.toLocaleString('en')} rps: prazo ${(ours(rps).opsPerCpuSecond / ref(rps).opsPerCpuSecond).toFixed(2)}× the reference's ops per CPU-second; the reference retains ${(ref(rps).retainedBytes / ours(rps).retainedBytes).toFixed(1)}× prazo's memory`,
    );
  }
  const spread = Math.abs(ours(100_000).retainedBytes - ours(10).retainedBytes);
  console.log(`prazo retained memory, 100 000 rps minus 10 rps: ${spread.toLocaleString('en')} B`);
}

const at = process.argv.indexOf('--child');
if (at >= 0) {
  const row = await child(process.argv[at + 1] as Implementation, Number(process.argv[at + 2]));
  process.stdout.write(JSON.stringify(row));
} else {
  parent();
}
