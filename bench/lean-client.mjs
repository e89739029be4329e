/**
 * One entry point in a lean client process: plain JavaScript (no TypeScript loader, nothing loaded
 * but undici, prazo's `dist/` and this file), the keep-alive server of the client benchmark on the
 * other core, 32 calls in flight. Each run is a fresh process; the runs of the chosen modes
 * alternate, and each prints its client CPU per call and what survived its young-generation
 * collections. Next to `bench/client.bench.ts --isolate`, whose client processes load every peer of
 * that benchmark, it shows what an entry point costs where little else lives in the heap.
 *
 *   npm run build && node bench/lean-client.mjs [--modes bare,pass,interceptor,fetch,pass-install,install,pool,dependency] \
 *     [--runs 5] [--calls 40000] [--undici DIR]
 *   node bench/lean-client.mjs --instructions [--modes …] [--runs 3] [--warmup 40000] [--segments 7] [--segment-calls 2000]
 *
 * `--instructions` counts instructions instead of timing CPU: each client process runs under
 * Valgrind's callgrind (`bench/support/instructions.mjs`), and what is compared is the instructions
 * per call of its counted segments after the warm-up — a figure the machine's load does not move,
 * where CPU time per call moves by 10–30 % from one run to the next here. Each run also says how
 * many requests reached the server beyond the client's calls (retries and hedge copies, the
 * server's count): their work is in the count. With one instance (this benchmark's dependency)
 * prazo sends no hedge copy; a retry follows a read timeout of the instrumented client's own pause.
 *
 * Modes: `bare` (`Agent.request`), `interceptor` (the same `Agent` composed with prazo's
 * interceptor), `fetch` (Node's global `fetch`), `install` (the global `fetch` after `install()`),
 * and the peers that say what composing alone costs: `pass` (the `Agent` composed with an
 * interceptor that passes every request through as it is) and `pass-install` (the global
 * dispatcher composed with that interceptor and set with undici's `setGlobalDispatcher()`); `pool`
 * (undici's `Pool.request`, from prazo's own undici) and `dependency` (`dependency().request`,
 * prazo's own client over that undici).
 * `--undici DIR`: the application's undici is the one installed under `DIR` (`npm install --prefix
 * DIR undici@8`) instead of prazo's own copy: the `Agent` comes from it, and it loads before prazo, so
 * its global dispatcher is the one the global `fetch` runs on (and `install()` composes onto).
 * Without it, the application's undici is prazo's own copy (as when npm dedupes the two), loaded by
 * the application before prazo: its `Agent` becomes that global dispatcher (prazo's import sets none).
 */
import { execFileSync, fork } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchDependency, measuredCalls, median, requireBuild, runTraced } from './support/gc-trace.mjs';

const SELF = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};

/** An interceptor that changes nothing: what composing costs before any policy. */
const passThrough = (dispatch) => (opts, handler) => dispatch(opts, handler);

/** In the client process: the chosen entry point, warmed up then measured (`measuredCalls`). */
async function child(mode, origin, calls) {
  // The application's undici loads first, as in a service that sets up its client before prazo: the
  // first copy of undici to load becomes the global dispatcher the global `fetch` runs on.
  const dir = arg('undici');
  const undici = await import(
    dir === undefined ? 'undici' : pathToFileURL(join(dir, 'node_modules', 'undici', 'index.js')).href
  );
  const dist = new URL('../dist/index.js', import.meta.url);
  const { dependency, install, prazoInterceptor } = await import(dist.href);
  const agent = new undici.Agent({ connections: 64 });
  let call;
  if (mode === 'pool' || mode === 'dependency') {
    // prazo's own client runs on its own undici, whatever --undici says: its peer is that copy's Pool.
    const own = await import('undici');
    const pool = mode === 'pool' ? new own.Pool(origin, { connections: 64 }) : null;
    const dep = mode === 'dependency' ? dependency(benchDependency(origin)) : null;
    call =
      pool !== null
        ? async () => {
            const { body } = await pool.request({ path: '/', method: 'GET' });
            await body.text();
          }
        : async () => {
            const { body } = await dep.request({ path: '/' });
            await body.text();
          };
  } else if (mode === 'bare' || mode === 'interceptor' || mode === 'pass') {
    const target =
      mode === 'bare'
        ? agent
        : agent.compose(
            mode === 'pass' ? passThrough : prazoInterceptor({ dependencies: [benchDependency(origin)] }),
          );
    call = async () => {
      const { body } = await target.request({ origin, path: '/', method: 'GET' });
      await body.text();
    };
  } else {
    if (mode === 'install') install({ dependencies: [benchDependency(origin)] });
    // The global dispatcher composed with the pass-through, set the way the application's undici
    // sets one (undici 8 keeps a legacy-handler adapter in the slot older copies read).
    if (mode === 'pass-install')
      undici.setGlobalDispatcher(undici.getGlobalDispatcher().compose(passThrough));
    call = async () => {
      await (await fetch(`${origin}/`)).text();
    };
  }
  if (process.argv.includes('--instructions')) await countedCalls(call);
  else await measuredCalls(call, calls, 32);
  process.exit(0);
}

/**
 * `--instructions`: in the client process under callgrind, `--warmup` calls (40 000 by default),
 * then `--segments` counted segments of `--segment-calls` calls each (7 of 2 000), 4 in flight.
 */
async function countedCalls(call) {
  // Under Valgrind the client's own pauses (a mark-compact, a late optimization) can outlast a read
  // timeout: a call that fails is counted, not thrown. And 4 in flight, not 32: a call's latency
  // there is the instrumented client's own slowness times the calls ahead of it, and at 32 it passed
  // the read timeout (280 ms) often enough that prazo's modes counted retries (473 of 2 000 calls
  // failed in one segment).
  let failed = 0;
  const run = async (n) => {
    let left = n;
    const worker = async () => {
      while (left-- > 0) await call().catch(() => failed++);
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  };
  // Loaded here only: a client process timed for CPU keeps nothing but undici, prazo and this file.
  const { segmentMarks } = await import('./support/instructions.mjs');
  const mark = segmentMarks();
  await run(Number(arg('warmup', '40000')));
  for (let i = 0; i < Number(arg('segments', '7')); i++) {
    await mark('start');
    await run(Number(arg('segment-calls', '2000')));
    await mark('end');
  }
  process.stdout.write(`${JSON.stringify({ failed })}\n`);
}

/**
 * `--instructions`: each run of each mode a client process under callgrind; its instructions per
 * call are the median of its segments', and beside it the lowest of its segments after the second.
 * Prints the table and returns nothing.
 */
async function countModes(modes, runs, origin, served) {
  const { countSegments, haveCallgrind } = await import('./support/instructions.mjs');
  if (!haveCallgrind()) {
    console.error('--instructions counts with Valgrind: apt-get install -y valgrind');
    process.exit(2);
  }
  const perCall = Number(arg('segment-calls', '2000'));
  const results = new Map(modes.map((m) => [m, []]));
  // Each run's lowest segment past the first two (the JIT's last tier-ups): a segment that meets a
  // mark-compact counts tens of thousands more a call, so the median of a few segments moves with
  // where the collector fell. The lowest is a floor only once the segments have settled: on a run
  // whose counts still fall from segment to segment (the `fetch` path on Node 24 after 20 000
  // warm-up calls, BENCHMARKS.md) neither figure is the call's own work.
  const lowest = new Map(modes.map((m) => [m, []]));
  for (let r = 0; r < runs; r++) {
    for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
      const args = [SELF, '--child', mode, '--origin', origin, '--instructions'];
      for (const name of ['undici', 'warmup', 'segments', 'segment-calls'])
        if (arg(name) !== undefined) args.push(`--${name}`, arg(name));
      const before = await served();
      const { segments, report } = await countSegments(args);
      // What reached the server beyond the client's calls: retries and hedge copies, whose work
      // is in the count (a copy sent is a whole attempt more).
      const calls = Number(arg('warmup', '40000')) + Number(arg('segments', '7')) * perCall;
      const extra = (await served()) - before - calls;
      const each = median(segments.map((n) => n / perCall));
      results.get(mode).push(each);
      const settled = segments.length > 2 ? segments.slice(2) : segments;
      lowest.get(mode).push(Math.min(...settled.map((n) => n / perCall)));
      process.stderr.write(
        `run ${r + 1} ${mode}: ${Math.round(each).toLocaleString('en')} instructions per call (segments ${segments.map((n) => Math.round(n / perCall).toLocaleString('en')).join(', ')}; ${report?.failed ?? 0} calls failed; ${extra} requests beyond the calls)\n`,
      );
    }
  }
  const first = results.get(modes[0]);
  const lines = [
    `Instructions per call under callgrind (V8 single-threaded), ${arg('warmup', '40000')} warm-up calls, then ${arg('segments', '7')} segments of ${perCall}, 4 in flight; ${runs} runs per mode; Node ${process.version}${arg('undici') === undefined ? ", prazo's undici" : `, undici from ${arg('undici')}`}`,
    '',
    `| mode | instructions per call (median of runs, range) | over ${modes[0]} (median, range) | lowest segment after the second (median of runs) | over ${modes[0]} |`,
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  const fmt = (v) => Math.round(v).toLocaleString('en');
  const firstLowest = lowest.get(modes[0]);
  for (const [mode, list] of results) {
    const added = list.map((x, r) => x - first[r]);
    const low = lowest.get(mode);
    const lowAdded = low.map((x, r) => x - firstLowest[r]);
    lines.push(
      `| ${mode} | ${fmt(median(list))} (${fmt(Math.min(...list))}–${fmt(Math.max(...list))}) | ${fmt(median(added))} (${fmt(Math.min(...added))}–${fmt(Math.max(...added))}) | ${fmt(median(low))} | ${fmt(median(lowAdded))} |`,
    );
  }
  console.log(lines.join('\n'));
}

/** Runs one mode in a traced client process (on CPU 0 when `pinned`). */
function measure(mode, origin, calls, pinned) {
  const args = [SELF, '--child', mode, '--origin', origin, '--calls', String(calls)];
  const dir = arg('undici');
  if (dir !== undefined) args.push('--undici', dir);
  return runTraced(mode, args, pinned);
}

function pinServer(pid) {
  if (os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (process.argv.includes('--child')) {
  await child(arg('child'), arg('origin'), Number(arg('calls')));
} else {
  requireBuild('bench/lean-client.mjs');
  const modes = arg('modes', 'bare,interceptor').split(',');
  const runs = Number(arg('runs', '5'));
  const calls = Number(arg('calls', '40000'));
  const server = fork(fileURLToPath(new URL('./keepalive-server.mjs', import.meta.url)), [], {
    stdio: 'inherit',
  });
  const pinned = server.pid !== undefined && pinServer(server.pid);
  const [port] = await new Promise((resolve) => server.once('message', (m) => resolve(m.ports)));
  const origin = `http://127.0.0.1:${port}`;
  if (process.argv.includes('--instructions')) {
    const served = () =>
      new Promise((resolve) => {
        server.once('message', (m) => resolve(m.served));
        server.send('served');
      });
    try {
      await countModes(modes, runs, origin, served);
    } finally {
      server.send('stop');
    }
    process.exit(0);
  }
  const results = new Map(modes.map((m) => [m, []]));
  try {
    for (let r = 0; r < runs; r++) {
      for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
        const out = await measure(mode, origin, calls, pinned);
        results.get(mode).push(out);
        process.stderr.write(
          `run ${r + 1} ${mode}: ${out.cpuUs.toFixed(1)} µs/call, ${out.survivedMb.toFixed(2)} MB surviving each of ${out.scavenges} scavenges\n`,
        );
      }
    }
  } finally {
    server.send('stop');
  }
  const lines = [
    `${calls} calls per run, 32 in flight, ${runs} runs per mode, each a fresh plain-JavaScript client process${pinned ? ' on CPU 0 (server on CPU 1)' : ''}; Node ${process.version}${arg('undici') === undefined ? ", prazo's undici" : `, undici from ${arg('undici')}`}`,
    '',
    `| mode | client CPU µs/call (median, range) | MB surviving each scavenge (median, range) | of ${modes[0]} (median of runs, range) |`,
    '| --- | ---: | ---: | ---: |',
  ];
  const first = results.get(modes[0]);
  const range = (values, digits) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  for (const [mode, list] of results) {
    // Run r of every mode ran back to back: each run is set against the first mode's run of the same
    // round (its CPU per call over this one's: the share of the first mode's throughput it keeps).
    const paired = list.map((x, r) => first[r].cpuUs / x.cpuUs);
    lines.push(
      `| ${mode} | ${range(
        list.map((x) => x.cpuUs),
        1,
      )} | ${range(
        list.map((x) => x.survivedMb),
        2,
      )} | ${range(paired, 2)} |`,
    );
  }
  console.log(lines.join('\n'));
}
