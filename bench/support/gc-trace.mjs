// What the benchmarks that trace their client processes share, in plain JavaScript so that a client
// process without a TypeScript loader (bench/lean-client.mjs) can import it too: the dependency they
// measure, the client side (warm-up, then the measured calls) and the parent side (a client process
// started with --trace-gc-nvp, its scavenges summed up).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import v8 from 'node:v8';

/** prazo with every feature on, as in the client benchmark: the options of one dependency. */
export function benchDependency(origin) {
  return {
    name: 'bench',
    origins: [origin],
    latency: { p99Ms: 200, p95Ms: 50 },
    userDeadlineMs: 2_000,
    attempts: 2,
    connections: 64,
    hedge: { at: 'p95' },
  };
}

/**
 * In the client process: `call` with `concurrency` in flight, first up to 5 000 times to warm up,
 * then `calls` times measured; says on stdout where the measured part starts and ends and, last, its
 * CPU per call and, where V8 counts them (`total_allocated_bytes`, Node 26), the bytes the measured
 * calls allocated. Where V8 does not count them, a young-generation collection is forced just before
 * the measured part and just after it (with `--expose-gc`, which {@link runTraced} passes): the
 * collections' `allocated` then add up to what the measured calls allocated, not that plus or minus
 * what came between the last natural collection and either end — up to a young generation's worth,
 * which in a run with a dozen collections was a third of the figure.
 */
export async function measuredCalls(call, calls, concurrency) {
  const run = async (n) => {
    let left = n;
    const worker = async () => {
      while (left-- > 0) await call();
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };
  await run(Math.min(5_000, calls));
  const counts = v8.getHeapStatistics().total_allocated_bytes !== undefined;
  if (!counts) globalThis.gc?.({ type: 'minor' });
  process.stdout.write('MEASURE\n');
  const allocatedFrom = v8.getHeapStatistics().total_allocated_bytes;
  const start = process.cpuUsage();
  await run(calls);
  const used = process.cpuUsage(start);
  const allocatedTo = v8.getHeapStatistics().total_allocated_bytes;
  // Its `allocated` is the measured calls' last part; the collection itself is not one of theirs.
  process.stdout.write('CLOSE\n');
  if (!counts) globalThis.gc?.({ type: 'minor' });
  const bytes = allocatedFrom === undefined ? undefined : allocatedTo - allocatedFrom;
  process.stdout.write(`RESULT ${JSON.stringify({ cpuUs: (used.user + used.system) / calls, bytes })}\n`);
}

/**
 * Runs `node --trace-gc-nvp ...args` (on CPU 0 when `pinned`), a client process that calls
 * {@link measuredCalls}, and sums up the scavenges of its measured calls. `bytes` is the bytes the
 * process allocated during its measured calls, from V8's own count where it has one (Node 26); else
 * the sum of the trace's `allocated` (what was allocated since the collection before) over the
 * measured part, closed by the collection {@link measuredCalls} forces at its end.
 */
export function runTraced(label, args, pinned) {
  const nodeArgs = ['--trace-gc-nvp', '--expose-gc', ...args];
  const proc = pinned
    ? spawn('taskset', ['-c', '0', process.execPath, ...nodeArgs], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  let measuring = false;
  let closing = false;
  let scavenges = 0;
  let survived = 0;
  let pause = 0;
  let cpuUs = Number.NaN;
  let counted;
  let allocated = 0;
  let rest = '';
  proc.stdout.on('data', (data) => {
    const lines = (rest + data.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      if (line === 'MEASURE') measuring = true;
      else if (line === 'CLOSE') closing = true;
      else if (line.startsWith('RESULT ')) ({ cpuUs, bytes: counted } = JSON.parse(line.slice(7)));
      else if (closing) allocated += traceField(line, 'allocated');
      else if (measuring) {
        // A collection's line (every kind): what was allocated since the one before.
        allocated += traceField(line, 'allocated');
        // A scavenge: Node ≤ 24's `gc=s`, Node 26's JSON `"gc":"s"`.
        if (line.includes(' gc=s ') || line.includes('"gc":"s"')) {
          scavenges++;
          survived += traceField(line, 'new_space_survived');
          pause += traceField(line, 'pause');
        }
      }
    }
  });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => {
      if (code !== 0) reject(new Error(`${label}: the client process exited with ${code}`));
      else
        resolve({
          scavenges,
          survivedMb: scavenges === 0 ? 0 : survived / scavenges / 1e6,
          pauseMs: scavenges === 0 ? 0 : pause / scavenges,
          cpuUs,
          bytes: counted ?? allocated,
        });
    });
  });
}

/** A figure of a trace line: `name=1.5` (Node ≤ 24) or `"name":1.5` (Node 26's JSON lines). */
function traceField(line, name) {
  const match = new RegExp(`(?:^|\\s)${name}=([0-9.]+)|"${name}":([0-9.]+)`).exec(line);
  return match === null ? 0 : Number(match[1] ?? match[2]);
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Exits with 2 and says so when the package is not built: `script` measures dist/, not the source. */
export function requireBuild(script) {
  if (existsSync(new URL('../../dist/index.js', import.meta.url))) return;
  console.error(`${script} measures the built package: run \`npm run build\` first.`);
  process.exit(2);
}
