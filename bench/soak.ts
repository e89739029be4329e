/**
 * Soak: prazo's client at the highest rate loopback allows (C requests in flight, bounded by time)
 * against two doubles with ~10 % mixed faults and hedging on. Proves a finished request leaves
 * nothing behind: heap after GC, active handles, event-loop delay, pool sockets, process warnings.
 *
 *   npm run soak                              # 180 s, prints a table; exit 1 when a check fails
 *   node --expose-gc --import tsx bench/soak.ts --seconds 20 --json
 *
 * Checks (the verdict; see RELIABILITY.md):
 * - heap used after GC, end of load vs end of warm-up: growth ≤ 20 MB, and ≤ 25 % of the start
 *   heap once the growth exceeds 4 MB (below that, a ratio of a small heap is noise);
 * - active handles and requests (`process.getActiveResourcesInfo()`, by type) back to the baseline
 *   taken before the dependency was created, within 5 s of `close()`;
 * - calls retained after they settled: every call's attempt history (the array a response or an
 *   error carries, shared with the call's internal state) is watched with a FinalizationRegistry;
 *   once the load has stopped and every call settled, at most one per pool socket plus one per
 *   worker may survive a GC (undici may keep the last request of a kept-alive socket). A listener,
 *   timer entry or set membership that outlives its call keeps thousands alive: this check finds a
 *   per-call leak in seconds, long before the heap bound would;
 * - no MaxListenersExceededWarning (any other warning is printed, and fails too);
 * - requests completed > 0 and every one of them settled (no call left hanging at the end).
 *
 * The figures (requests completed, their outcomes, what the servers received) are those after the
 * warm-up; the warm-up's request count is printed on its own line.
 */
import { fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { DoubleStats } from '@prazo/lab/double';
import { dependency } from '../src/client/dependency.js';

const MB = 1024 * 1024;
/** Heap growth bounds (see the header). */
export const SOAK_LIMITS = Object.freeze({
  heapGrowthBytes: 20 * MB,
  heapGrowthRatio: 0.25,
  heapRatioFloorBytes: 4 * MB,
  handlesSettleMs: 5_000,
});

interface Options {
  seconds: number;
  concurrency: number;
  json: boolean;
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '180' },
      concurrency: { type: 'string', default: '64' },
      json: { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  if (!Number.isFinite(seconds) || seconds < 5 || seconds > 3600) {
    throw new Error(`--seconds must be a number from 5 to 3600, got ${values.seconds}`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024) {
    throw new Error(`--concurrency must be an integer from 1 to 1024, got ${values.concurrency}`);
  }
  return { seconds, concurrency, json: values.json === true };
}

type Counts = Record<string, number>;

function resources(): Counts {
  const counts: Counts = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

function above(now: Counts, baseline: Counts): Counts {
  const extra: Counts = {};
  for (const [type, n] of Object.entries(now)) {
    const d = n - (baseline[type] ?? 0);
    if (d > 0) extra[type] = d;
  }
  return extra;
}

function gcHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc (npm run soak does)');
  // Twice: the first pass can leave weakly reachable objects for the second.
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The doubles' child process. */
async function startDoubleProcess() {
  const child = fork(fileURLToPath(new URL('./soak-doubles.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waitFor = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: { type?: string }) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message as T);
      };
      const onExit = (code: number | null) => reject(new Error(`doubles process exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { urls } = await waitFor<{ urls: string[] }>('ready');
  return {
    urls,
    async stats(): Promise<DoubleStats[]> {
      const reply = waitFor<{ stats: DoubleStats[] }>('stats');
      child.send({ type: 'stats' });
      return (await reply).stats;
    },
    async stop(): Promise<void> {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface SoakReport {
  ok: boolean;
  failures: string[];
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  /** Requests of the warm-up: run to fill the pools, counted nowhere else in the report. */
  warmup: { completed: number };
  /** Requests after the warm-up; `byOutcome` sums to `completed`. */
  requests: { completed: number; perSecond: number; byOutcome: Counts };
  server: { received: number; originals: number; retries: number; hedges: number; faults: Counts };
  retainedCalls: { watched: number; alive: number; limit: number };
  heap: { startBytes: number; endBytes: number; growthBytes: number; growthRatio: number; peakBytes: number };
  handles: { baseline: Counts; peakDuring: Counts; afterClose: Counts; leftAboveBaseline: Counts };
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  poolSockets: { peak: number; afterClose: number };
  warnings: string[];
}

async function soak(options: Options): Promise<SoakReport> {
  const warmupSeconds = Math.min(20, Math.max(3, Math.round(options.seconds * 0.1)));
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);

  const doubles = await startDoubleProcess();
  await sleep(200);
  const baseline = resources();

  const dep = dependency({
    name: 'soak',
    origins: doubles.urls,
    // Healthy answers take ~1 ms, but this 2-core machine is shared: a 50 ms p99 (70 ms read
    // timeout) cuts hangs quickly without turning scheduling pauses into a reconnect storm.
    latency: { p99Ms: 50, p95Ms: 20 },
    userDeadlineMs: 1000,
    attempts: 2,
    hedge: { at: 'p95' },
  });

  // Outcomes of the measured calls only, like `completed` and the server's counts: the warm-up's are
  // left out of all three.
  const byOutcome: Counts = {};
  let measuring = false;
  // One long-lived signal shared by a share of the calls, as a server's shutdown signal would be:
  // the pattern that makes listener leaks (and MaxListenersExceededWarning) show.
  const shutdown = new AbortController();
  let sequence = 0;
  // Counts calls whose history is still reachable; see the header.
  let watched = 0;
  let collected = 0;
  let watching = false;
  const registry = new FinalizationRegistry<null>(() => {
    collected++;
  });
  const watch = (history: object | undefined) => {
    if (!watching || history === undefined) return;
    watched++;
    registry.register(history, null);
  };

  async function one(): Promise<void> {
    const i = sequence++;
    const measured = measuring;
    const count = (key: string) => {
      if (measured) byOutcome[key] = (byOutcome[key] ?? 0) + 1;
    };
    const kind = i % 20;
    const cancel = kind === 19 ? new AbortController() : undefined;
    const cancelTimer = cancel ? setTimeout(() => cancel.abort(), 2) : undefined;
    const method = kind === 17 || kind === 18 ? 'POST' : 'GET';
    try {
      const res = await dep.request({
        method,
        path: `/soak/${i % 1000}`,
        ...(kind === 17 ? { headers: { 'idempotency-key': `soak-${i}` } } : {}),
        ...(method === 'POST' ? { body: '{"n":1}' } : {}),
        ...(cancel ? { signal: cancel.signal } : kind % 4 === 0 ? { signal: shutdown.signal } : {}),
      });
      watch(res.attempts);
      try {
        await res.body.text();
        count(`status ${res.status}`);
      } catch (error) {
        count(`body ${(error as { code?: string }).code ?? 'error'}`);
      }
    } catch (error) {
      watch((error as { attempts?: object }).attempts);
      count(`error ${(error as { code?: string }).code ?? (error as Error).name}`);
    } finally {
      if (cancelTimer) clearTimeout(cancelTimer);
    }
  }

  const loop = async (until: number) => {
    const workers = Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < until) await one();
    });
    await Promise.all(workers);
  };

  // Warm-up: pools fill, the live window and V8's code settle.
  await loop(performance.now() + warmupSeconds * 1000);
  // Every warm-up call has settled (the loop waits for its workers): what comes next is measured.
  const serverAtStart = await doubles.stats();
  const startBytes = gcHeap();
  const completedAtStart = sequence;
  watching = true;
  measuring = true;

  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  const peakDuring: Counts = {};
  let peakHeap = 0;
  const sampler = setInterval(() => {
    for (const [type, n] of Object.entries(resources()))
      peakDuring[type] = Math.max(peakDuring[type] ?? 0, n);
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 500);
  const started = performance.now();
  const measuredMs = (options.seconds - warmupSeconds) * 1000;
  let lastProgress = started;
  const progress = setInterval(() => {
    if (options.json) return;
    const now = performance.now();
    process.stderr.write(
      `\rsoak: ${Math.round((now - started) / 1000)}/${Math.round(measuredMs / 1000)} s, ${sequence - completedAtStart} requests`,
    );
    lastProgress = now;
  }, 2_000);
  await loop(started + measuredMs);
  const elapsedS = (performance.now() - started) / 1000;
  clearInterval(sampler);
  clearInterval(progress);
  if (!options.json && lastProgress !== started) process.stderr.write('\n');
  eld.disable();
  watching = false;
  const endBytes = gcHeap();
  const completed = sequence - completedAtStart;
  // Finalizers run in tasks after a GC: give them a few turns.
  const retainedLimit = (peakDuring['TCPSocketWrap'] ?? 0) + options.concurrency;
  for (let i = 0; i < 20 && watched - collected > retainedLimit; i++) {
    gcHeap();
    await sleep(50);
  }
  const alive = watched - collected;

  const serverStats = await doubles.stats();
  await dep.close();
  shutdown.abort();

  // Closed: handles must come back to the baseline (sockets close a moment after close() resolves).
  let afterClose = resources();
  const settleUntil = performance.now() + SOAK_LIMITS.handlesSettleMs;
  while (Object.keys(above(afterClose, baseline)).length > 0 && performance.now() < settleUntil) {
    await sleep(50);
    afterClose = resources();
  }
  const leftAboveBaseline = above(afterClose, baseline);
  await doubles.stop();
  process.off('warning', onWarning);

  // The doubles count from their start: what they saw during the warm-up is taken off.
  const server = { received: 0, originals: 0, retries: 0, hedges: 0, faults: {} as Counts };
  for (const [sign, stats] of [
    [1, serverStats],
    [-1, serverAtStart],
  ] as const) {
    for (const s of stats) {
      server.received += sign * s.received;
      server.originals += sign * s.originals;
      server.retries += sign * s.retries;
      server.hedges += sign * s.hedges;
      for (const [k, v] of Object.entries(s.faults)) server.faults[k] = (server.faults[k] ?? 0) + sign * v;
    }
  }

  const growthBytes = endBytes - startBytes;
  const growthRatio = growthBytes / startBytes;
  const failures: string[] = [];
  if (growthBytes > SOAK_LIMITS.heapGrowthBytes) {
    failures.push(`heap grew by ${(growthBytes / MB).toFixed(1)} MB (limit 20 MB)`);
  } else if (growthBytes > SOAK_LIMITS.heapRatioFloorBytes && growthRatio > SOAK_LIMITS.heapGrowthRatio) {
    failures.push(`heap grew by ${(growthRatio * 100).toFixed(0)} % (limit 25 % above 4 MB)`);
  }
  if (alive > retainedLimit) {
    failures.push(`${alive} of ${watched} settled calls still reachable (limit ${retainedLimit})`);
  }
  if (Object.keys(leftAboveBaseline).length > 0) {
    failures.push(`handles above the baseline after close: ${JSON.stringify(leftAboveBaseline)}`);
  }
  const maxListeners = warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'));
  if (maxListeners.length > 0) failures.push(`${maxListeners.length} MaxListenersExceededWarning`);
  const others = warnings.filter((w) => !w.startsWith('MaxListenersExceededWarning'));
  if (others.length > 0) failures.push(`${others.length} other process warning(s)`);
  if (completed === 0) failures.push('no request completed');

  return {
    ok: failures.length === 0,
    failures,
    seconds: options.seconds,
    warmupSeconds,
    concurrency: options.concurrency,
    warmup: { completed: completedAtStart },
    requests: { completed, perSecond: Math.round(completed / elapsedS), byOutcome: sortCounts(byOutcome) },
    server,
    retainedCalls: { watched, alive, limit: retainedLimit },
    heap: { startBytes, endBytes, growthBytes, growthRatio, peakBytes: peakHeap },
    handles: { baseline, peakDuring, afterClose, leftAboveBaseline },
    eventLoopDelayMs: {
      p50: eld.percentile(50) / 1e6,
      p99: eld.percentile(99) / 1e6,
      max: eld.max / 1e6,
    },
    poolSockets: { peak: peakDuring['TCPSocketWrap'] ?? 0, afterClose: afterClose['TCPSocketWrap'] ?? 0 },
    warnings,
  };
}

function sortCounts(counts: Counts): Counts {
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1]));
}

function print(report: SoakReport): string {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  const lines = [
    `prazo soak: ${report.seconds} s (${report.warmupSeconds} s warm-up), ${report.concurrency} in flight, hedging on, ~10 % faults`,
    '',
    `warm-up                 ${report.warmup.completed} requests (not counted below)`,
    `requests completed      ${report.requests.completed} (${report.requests.perSecond}/s)`,
    ...Object.entries(report.requests.byOutcome).map(([k, v]) => `  ${k.padEnd(30)}${v}`),
    `server received         ${report.server.received} (originals ${report.server.originals}, retries ${report.server.retries}, hedges ${report.server.hedges})`,
    `server faults           ${JSON.stringify(report.server.faults)}`,
    `settled calls retained  ${report.retainedCalls.alive} of ${report.retainedCalls.watched} (limit ${report.retainedCalls.limit})`,
    `heap after GC           start ${mb(report.heap.startBytes)}, end ${mb(report.heap.endBytes)}, growth ${mb(report.heap.growthBytes)} (${(report.heap.growthRatio * 100).toFixed(1)} %), peak ${mb(report.heap.peakBytes)}`,
    `handles baseline        ${JSON.stringify(report.handles.baseline)}`,
    `handles peak during     ${JSON.stringify(report.handles.peakDuring)}`,
    `handles after close     ${JSON.stringify(report.handles.afterClose)}`,
    `event-loop delay        p50 ${report.eventLoopDelayMs.p50.toFixed(1)} ms, p99 ${report.eventLoopDelayMs.p99.toFixed(1)} ms, max ${report.eventLoopDelayMs.max.toFixed(1)} ms`,
    `pool sockets            peak ${report.poolSockets.peak}, after close ${report.poolSockets.afterClose}`,
    `process warnings        ${report.warnings.length === 0 ? 'none' : ''}`,
    ...report.warnings.map((w) => `  ${w}`),
    '',
    report.ok ? 'verdict: PASS' : `verdict: FAIL — ${report.failures.join('; ')}`,
  ];
  return `${lines.join('\n')}\n`;
}

const options = (() => {
  try {
    return readOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`soak: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const report = await soak(options);
process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : print(report));
process.exitCode = report.ok ? 0 : 1;
