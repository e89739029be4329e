/**
 * Overload, transient and steady, side by side: what each client keeps of a supplier of known
 * capacity (a node:http server with W workers and a deadline-blind FIFO queue that keeps serving
 * requests whose caller left), in real time, against a fresh supplier per client.
 *
 *   node --import tsx bench/overload-transient.bench.ts [--rounds 3] [--json]
 *
 * - **transient** (`runTransient`, defaults): 8 workers × 20 ms offered 200 rps open loop (50 %);
 *   after 3 s the supplier keeps 3 workers at 40 ms for 2 s (75 rps, 37.5 % of what arrives), then
 *   returns; 5 s more. Success by send time: during the trigger (the ideal is 37.5 %), in the first
 *   second after it, from 1 s and from 3 s after it; recovery time; the supplier's longest queue.
 * - **steady 3×** (`runOverload`, the drill's experiment): 8 workers × 25 ms offered 960 rps for 6 s;
 *   goodput ÷ capacity.
 *
 * Clients: naive (undici, blind attempts, no budget), prazo (calibrated timeouts, retry budget),
 * prazo-protected (the same with `concurrency: true, throttle: true`). The steady experiment's
 * protected supplier also runs prazo's server admission, as in the drill. Each round runs every
 * client once; the median of the rounds is reported (real time on a shared machine: read the
 * spread, which `--json` gives whole).
 */
import { loadavg } from 'node:os';
import { runOverload, runTransient, type TransientFigures } from '@prazo/lab/overload';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rounds = arg('rounds', 3);
const json = process.argv.includes('--json');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number) => `${Math.round(x * 100)} %`;

const transient: TransientFigures[][] = [];
const steady: Array<Awaited<ReturnType<typeof runOverload>>> = [];
const load = [loadavg()[0]!];
for (let round = 0; round < rounds; round++) {
  transient.push(await runTransient());
  steady.push(await runOverload({ durationMs: 6_000 }));
  load.push(loadavg()[0]!);
}

const configs = transient[0]!.map((f) => f.config);
const rows = configs.map((config, i) => {
  const t = transient.map((r) => r[i]!);
  const s = steady.map((r) => r.find((f) => f.config === config)!);
  return {
    config,
    triggerSuccess: median(t.map((f) => f.trigger.success)),
    triggerOfIdeal: median(t.map((f) => f.trigger.success / f.triggerIdeal)),
    after0to1s: median(t.map((f) => f.after0to1s.success)),
    after1s: median(t.map((f) => f.after1s.success)),
    after3s: median(t.map((f) => f.after3s.success)),
    recoveryMs: median(t.map((f) => f.recoveryMs ?? Number.POSITIVE_INFINITY)),
    supplierPeakQueue: median(t.map((f) => f.supplierPeakQueue)),
    amplification: median(t.map((f) => f.amplification)),
    steadyGoodputShare: median(s.map((f) => f.goodputShare)),
  };
});

if (json) {
  console.log(JSON.stringify({ node: process.version, load, rows, transient, steady }, null, 2));
} else {
  const first = transient[0]![0]!;
  console.log(
    `Transient: ${first.offeredRps} rps to ${first.capacityRps} rps of capacity, ${first.triggerCapacityRps} rps for 2 s (ideal ${pct(first.triggerIdeal)}); steady: 3× capacity. Median of ${rounds} rounds, Node ${process.version}, load ${load.map((x) => x.toFixed(1)).join(' → ')}`,
  );
  console.log(
    '| client | during the trigger (of ideal) | 0–1 s after | from 1 s after | from 3 s after | back to ≥ 90 % after | supplier queue, max | supplier requests per request | steady 3×: goodput ÷ capacity |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.config} | ${pct(r.triggerSuccess)} (${pct(r.triggerOfIdeal)}) | ${pct(r.after0to1s)} | ${pct(r.after1s)} | ${pct(r.after3s)} | ${Number.isFinite(r.recoveryMs) ? `${(r.recoveryMs / 1000).toFixed(2)} s` : 'never'} | ${r.supplierPeakQueue} | ${r.amplification.toFixed(2)}× | ${pct(r.steadyGoodputShare)} |`,
    );
}
