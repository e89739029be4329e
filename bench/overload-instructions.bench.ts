/**
 * The overload protections on the **healthy path**, counted in instructions: what `concurrency` and
 * `throttle` add to a call, against the same `dependency().request` without them.
 *
 * `overload-healthy.bench.ts` compares CPU time, and on a shared 2-core virtual machine the CPU time
 * of one round against the next moves by more than the 5 % it is meant to resolve (the hypervisor
 * steals 10 % of the CPU in some hours). An instruction count does not move with the machine. The
 * client process runs under Valgrind's callgrind (`support/instructions.mjs`: V8 single-threaded,
 * so the compiler and the garbage collector run on the counted thread at points set by what the
 * process executed). It keeps one dependency of each kind, warms both up, then runs segments of
 * `--calls` calls, the two kinds in turn (ABBA), and each segment's instructions are counted apart
 * from the process's start, imports and warm-up. Each pair of neighbouring segments gives one
 * ratio; the median of the pairs is the figure (a segment that meets a mark-compact of the heap or a
 * late optimization counts up to twice the others, in either kind).
 *
 * The calls are a closed loop of `--concurrency` calls in flight against a keep-alive `node:http`
 * server in a process of its own (not under Valgrind), so the dependency answers far faster than
 * the instrumented client asks: the healthy path, where the limit never binds (the report gives the
 * most calls seen waiting for a slot, and the calls refused, to show it).
 *
 * Two biases, both against the protections: hedging is off in both kinds (under Valgrind the
 * client runs a few hundred times slower, its own pauses pass for the dependency's tail, and a
 * hedge would double a call's work at random; without the hedge step a call is smaller, and the
 * protections' share of it larger); and the work the protections do per unit of time rather than
 * per call (the limit's window closes at least every 100 ms, the throttle's ring moves every
 * 200 ms) is spread over a few hundred times fewer calls than at native speed.
 *
 *   npm run build && node --import tsx bench/overload-instructions.bench.ts \
 *     [--pairs 16] [--calls 1000] [--warmup 30000] [--concurrency 4] [--json]
 *
 * Needs `valgrind` (Debian: `apt-get install -y valgrind`). About 5 minutes with the defaults here.
 * Not part of `npm test`.
 */
import { fileURLToPath } from 'node:url';
import { countSegments, haveCallgrind, segmentMarks } from './support/instructions.mjs';
import {
  positiveArg as arg,
  benchDependencyOptions,
  importBuilt,
  median,
  startBenchServer,
} from './support/load.js';

const PAIRS = arg('pairs', 16);
const CALLS = arg('calls', 1_000);
const WARMUP = arg('warmup', 30_000);
const CONCURRENCY = arg('concurrency', 4);

type Variant = 'plain' | 'protected';

/** The order of the measured segments: ABBA, pair by pair. */
function segments(): Variant[] {
  const order: Variant[] = [];
  for (let pair = 0; pair < PAIRS; pair++)
    order.push(...(pair % 2 === 0 ? (['plain', 'protected'] as const) : (['protected', 'plain'] as const)));
  return order;
}

interface ChildReport {
  failed: number;
  refused: number;
  waited: number;
}

/**
 * The client process (under callgrind): both dependencies, a warm-up of each in turns, then the
 * segments. Before and after each segment it prints `start` or `end` and waits for a line on stdin
 * while the parent reads the counters.
 */
async function child(): Promise<void> {
  const { dependency } = await importBuilt<typeof import('../src/index.js')>('index');
  const origin = process.argv[process.argv.indexOf('--origin') + 1] ?? '';
  const deps = {
    plain: dependency(benchDependencyOptions([origin], 64, false, false)),
    protected: dependency(benchDependencyOptions([origin], 64, false, true)),
  };
  const report: ChildReport = { failed: 0, refused: 0, waited: 0 };
  deps.protected.on('limited', () => {
    report.refused++;
  });
  const run = async (variant: Variant, count: number): Promise<void> => {
    const dep = deps[variant];
    let left = count;
    const worker = async (): Promise<void> => {
      while (left > 0) {
        left--;
        try {
          const response = await dep.request({ path: '/' });
          await response.body.dump();
        } catch {
          report.failed++;
        }
        // A look at the queue now and then, for both kinds alike: `overload()` builds a report.
        if (left % 64 === 0) report.waited = Math.max(report.waited, dep.overload().concurrency?.queued ?? 0);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const mark = segmentMarks();
  for (let done = 0; done < WARMUP; done += 100) {
    await run('plain', 100);
    await run('protected', 100);
  }
  for (const variant of segments()) {
    await mark('start');
    await run(variant, CALLS);
    await mark('end');
  }
  await Promise.all([deps.plain.close(), deps.protected.close()]);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  if (!haveCallgrind()) {
    // Skipped, not failed: `npm run bench` runs every benchmark, and Valgrind is optional.
    console.error('Skipped: this benchmark counts instructions with Valgrind (apt-get install -y valgrind).');
    return;
  }
  const server = await startBenchServer('http', false);
  let counted: { segments: number[]; report: unknown };
  try {
    counted = await countSegments(
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        '--origin',
        server.origins[0]!,
        ...process.argv.slice(2),
      ],
      (i, instructions) => {
        if (!json)
          console.error(
            `${segments()[i]}: ${Math.round(instructions / CALLS).toLocaleString('en')} instructions per call`,
          );
      },
    );
  } finally {
    server.stop();
  }
  const perCall = counted.segments.map((n) => n / CALLS);
  const report = counted.report as ChildReport;
  const order = segments();
  // Each pair's two neighbouring segments: protected ÷ plain.
  const ratios = Array.from({ length: PAIRS }, (_, pair) => {
    const a = perCall[2 * pair]!;
    const b = perCall[2 * pair + 1]!;
    return order[2 * pair] === 'protected' ? a / b : b / a;
  });
  const result = {
    node: process.version,
    warmup: WARMUP,
    calls: CALLS,
    pairs: PAIRS,
    concurrency: CONCURRENCY,
    plainPerCall: perCall.filter((_, i) => order[i] === 'plain'),
    protectedPerCall: perCall.filter((_, i) => order[i] === 'protected'),
    ratios,
    ratioMedian: median(ratios),
    ...report,
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const quartile = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  console.log(
    `Node ${result.node}; ${WARMUP} warm-up calls of each, then ${PAIRS} ABBA pairs of ${CALLS} calls; ${CONCURRENCY} in flight`,
  );
  console.log(
    `instructions per call, medians: plain ${Math.round(median(result.plainPerCall)).toLocaleString('en')}, protected ${Math.round(median(result.protectedPerCall)).toLocaleString('en')}`,
  );
  console.log(
    `protected ÷ plain, pair by pair: median ${result.ratioMedian.toFixed(4)} (quartiles ${quartile(0.25).toFixed(4)}–${quartile(0.75).toFixed(4)}, range ${sorted[0]!.toFixed(4)}–${sorted.at(-1)!.toFixed(4)})`,
  );
  console.log(`failed ${result.failed}, refused ${result.refused}, most waiting for a slot ${result.waited}`);
}

if (process.argv.includes('--child')) await child();
else await main();
