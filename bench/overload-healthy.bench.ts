/**
 * The overload protections on the **healthy path**: what `concurrency` and `throttle` cost a call
 * when the dependency has room, against the same `dependency().request` without them, same run.
 *
 * The client benchmark (`client.bench.ts`) drives a closed loop: 32 calls in flight as fast as the
 * two processes go, so its server runs at 100 % of a CPU and its latency rises with every call added
 * — the dependency is at its capacity, and the concurrency limit, rightly, binds. A healthy service
 * sends less than its dependency can serve. Here the load is an **open loop** at a fixed rate (by
 * default 4 000 calls/s, about a quarter of what the closed loop reaches on this machine), and what
 * is compared is the client's CPU per call (user + system of this process over the round, ÷ calls)
 * and the latency, the plain and the protected dependency alternating round by round, a new
 * dependency each round (so every round pays the limit's start) and one kept across rounds.
 *
 *   npm run build && node --expose-gc --import tsx bench/overload-healthy.bench.ts \
 *     [--rounds 7] [--seconds 3] [--rate 4000] [--slices 40] [--slice-ms 250] [--no-pin] [--json]
 *
 * Prints, per variant, the median of the rounds (the first round is a warm-up) and the protected ÷
 * plain ratio of CPU per call (the plain's µs ÷ the protected's: 1 = same cost, below 1 = the
 * protections cost that share), with the calls that waited for a slot or were refused.
 *
 * Then the **interleaved slices**: the two kept dependencies take turns every `--slice-ms` (ABBA,
 * `--slices` pairs), each slice the same open loop, and each pair's two slices are compared. Rounds
 * of seconds each measured the machine as much as the protections (a round of one variant against
 * the next one's spread over 0.5–1.3× on the shared machine); two slices a quarter of a second apart
 * see the same machine, and the median of forty pairs holds a share of a percent.
 */
import { LatencyHistogram } from '../src/latency/histogram.js';
import {
  positiveArg as arg,
  benchDependencyOptions,
  importBuilt,
  median,
  startBenchServer,
} from './support/load.js';

const { dependency } = await importBuilt<typeof import('../src/index.js')>('index');

const ROUNDS = arg('rounds', 7);
const SECONDS = arg('seconds', 3);
const RATE = arg('rate', 4_000);
const SLICES = arg('slices', 40);
const SLICE_MS = arg('slice-ms', 250);
const json = process.argv.includes('--json');

type Dep = ReturnType<typeof dependency>;

/** The bench's dependency: every feature on (as `client.bench.ts`), the protections on or off. */
function make(origin: string, protectedCall: boolean): Dep {
  return dependency(benchDependencyOptions([origin], 64, true, protectedCall));
}

interface Round {
  cpuUsPerCall: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** Most calls seen waiting for a slot at once, sampled every ~100 ms (protected only). */
  waited: number;
  /** Calls refused by a protection (`CONCURRENCY_LIMITED`, `THROTTLED`). */
  refused: number;
  /** Calls sent behind schedule by more than 5 ms (the loop could not keep the rate). */
  late: number;
}

/**
 * Sends `RATE` calls a second for `SECONDS`, on a 1 ms schedule (the calls due since the last tick
 * are sent together), and waits for the last answer. Bounded: exactly `RATE × SECONDS` calls.
 */
async function round(dep: Dep, seconds = SECONDS): Promise<Round> {
  const total = Math.round(RATE * seconds);
  const histogram = new LatencyHistogram();
  let sent = 0;
  let done = 0;
  let failed = 0;
  let refused = 0;
  let late = 0;
  let waited = 0;
  const onLimited = () => {
    refused++;
  };
  dep.on('limited', onLimited);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const finish = () => {
      if (++done === total) resolve();
    };
    const send = (dueMs: number) => {
      const t0 = performance.now();
      if (t0 - dueMs > 5) late++;
      dep.request({ path: '/' }).then(
        async (response) => {
          await response.body.text();
          histogram.record(performance.now() - t0);
          finish();
        },
        () => {
          failed++;
          finish();
        },
      );
    };
    let ticks = 0;
    const tick = () => {
      // Calls waiting for a slot, sampled every 100 ticks (often enough to see a queue, rarely
      // enough that the snapshot's own cost does not weigh on the protected call's CPU).
      if (ticks++ % 100 === 0) waited = Math.max(waited, dep.overload().concurrency?.queued ?? 0);
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) * RATE) / 1000) + 1);
      while (sent < due) send(start + (sent++ * 1000) / RATE);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const cpu = process.cpuUsage(cpu0);
  dep.off('limited', onLimited);
  return {
    cpuUsPerCall: (cpu.user + cpu.system) / total,
    p50Ms: histogram.percentile(50),
    p99Ms: histogram.percentile(99),
    failed,
    waited,
    refused,
    late,
  };
}

const server = await startBenchServer('http', !process.argv.includes('--no-pin'));
const origin = server.origins[0];
const kept = { plain: make(origin, false), protected: make(origin, true) };
const variants = [
  { name: 'plain, new dependency each round', run: () => fresh(false) },
  { name: 'protected, new dependency each round', run: () => fresh(true) },
  { name: 'plain, kept across rounds', run: () => round(kept.plain) },
  { name: 'protected, kept across rounds', run: () => round(kept.protected) },
];
async function fresh(protectedCall: boolean): Promise<Round> {
  const dep = make(origin, protectedCall);
  try {
    return await round(dep);
  } finally {
    await dep.close();
  }
}

const results = new Map<string, Round[]>(variants.map((v) => [v.name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
    globalThis.gc?.();
    const result = await v.run();
    if (r > 0) results.get(v.name)!.push(result);
  }
}
/**
 * The kept dependencies in turns of `SLICE_MS`, ABBA: plain ÷ protected CPU per call for each pair
 * of adjacent slices (a collection due in one slice of a pair lands in the other as often).
 */
const slicePairs: number[] = [];
let slicePlainUs = 0;
let sliceProtectedUs = 0;
for (let i = 0; i < SLICES; i++) {
  const order = i % 2 === 0 ? (['plain', 'protected'] as const) : (['protected', 'plain'] as const);
  const cpu: Record<'plain' | 'protected', number> = { plain: 0, protected: 0 };
  for (const name of order) cpu[name] = (await round(kept[name], SLICE_MS / 1_000)).cpuUsPerCall;
  slicePairs.push(cpu.plain / cpu.protected);
  slicePlainUs += cpu.plain;
  sliceProtectedUs += cpu.protected;
}
/** The quartiles of the paired ratios: how far apart the pairs fell. */
const quartile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const interleaved = {
  pairs: slicePairs.length,
  medianRatio: median(slicePairs),
  q1: quartile(slicePairs, 0.25),
  q3: quartile(slicePairs, 0.75),
  plainUsPerCall: slicePlainUs / SLICES,
  protectedUsPerCall: sliceProtectedUs / SLICES,
};

await Promise.all([kept.plain.close(), kept.protected.close()]);
server.stop();

const summary = variants.map((v) => {
  const rs = results.get(v.name)!;
  return {
    name: v.name,
    cpuUsPerCall: median(rs.map((x) => x.cpuUsPerCall)),
    p50Ms: median(rs.map((x) => x.p50Ms)),
    p99Ms: median(rs.map((x) => x.p99Ms)),
    failed: rs.reduce((s, x) => s + x.failed, 0),
    waited: Math.max(...rs.map((x) => x.waited)),
    refused: rs.reduce((s, x) => s + x.refused, 0),
    late: rs.reduce((s, x) => s + x.late, 0),
    rounds: rs,
  };
});
/** Plain ÷ protected CPU per call, round by round (paired: the same round's two runs). */
const pairRatios = (plain: string, prot: string): number[] =>
  results.get(plain)!.map((p, i) => p.cpuUsPerCall / results.get(prot)![i]!.cpuUsPerCall);
const ratios = {
  newEachRound: pairRatios('plain, new dependency each round', 'protected, new dependency each round'),
  kept: pairRatios('plain, kept across rounds', 'protected, kept across rounds'),
};

if (json) {
  console.log(
    JSON.stringify({
      rate: RATE,
      seconds: SECONDS,
      rounds: ROUNDS,
      pinned: server.pinned,
      summary,
      ratios,
      interleaved: { ...interleaved, sliceMs: SLICE_MS, ratios: slicePairs },
    }),
  );
} else {
  console.log(
    `open loop, ${RATE} calls/s for ${SECONDS} s a round, ${ROUNDS} rounds (the first a warm-up), ${
      server.pinned ? 'client on CPU 0, server on CPU 1' : 'not pinned'
    }, Node ${process.version}\n`,
  );
  console.log(
    '| variant | client CPU µs/call | p50 ms | p99 ms | failed | most waiting for a slot | refused | sent late |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const s of summary)
    console.log(
      `| ${s.name} | ${s.cpuUsPerCall.toFixed(2)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${s.failed} | ${s.waited} | ${s.refused} | ${s.late} |`,
    );
  const show = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' ');
  console.log(
    `\nplain ÷ protected, CPU per call — new dependency each round: median ${median(ratios.newEachRound).toFixed(3)} (${show(ratios.newEachRound)}); kept across rounds: median ${median(ratios.kept).toFixed(3)} (${show(ratios.kept)})`,
  );
  console.log(
    `\ninterleaved, kept dependencies, ${interleaved.pairs} pairs of ${SLICE_MS} ms slices (ABBA): plain ÷ protected, median ${interleaved.medianRatio.toFixed(3)} (quartiles ${interleaved.q1.toFixed(3)}–${interleaved.q3.toFixed(3)}); client CPU µs/call, mean of the slices: plain ${interleaved.plainUsPerCall.toFixed(2)}, protected ${interleaved.protectedUsPerCall.toFixed(2)}`,
  );
}
