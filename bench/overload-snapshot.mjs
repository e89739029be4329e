/**
 * What a read of `dependency.overload()` costs with the protections on, against the same read of a
 * dependency without them (which builds the same outer object with two nulls), same process, in
 * turns. A caller that polls it (a gauge, a log line, a load test watching the queue) pays it on
 * every read. No network: the dependencies are never called.
 *
 *   npm run build && node bench/overload-snapshot.mjs [--rounds 6] [--reads 200000]
 */
import { median, requireBuild } from './support/gc-trace.mjs';

requireBuild('bench/overload-snapshot.mjs');
const { dependency } = await import(new URL('../dist/index.js', import.meta.url).href);

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i === -1 ? Number.NaN : Number(process.argv[i + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const ROUNDS = arg('rounds', 6);
const READS = arg('reads', 200_000);

const make = (guarded) =>
  dependency({
    name: 'bench',
    origins: ['http://127.0.0.1:9'],
    latency: { p99Ms: 200, p95Ms: 50 },
    userDeadlineMs: 2_000,
    ...(guarded ? { concurrency: true, throttle: true } : {}),
  });
const deps = { plain: make(false), protected: make(true) };

/** Nanoseconds per read of `dep.overload()` over `READS` reads (what it returns is used). */
function time(dep) {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) sink += dep.overload().concurrency?.queued ?? 0;
  const ns = Number(process.hrtime.bigint() - start) / READS;
  if (sink < 0) console.log(sink);
  return ns;
}

const results = { plain: [], protected: [] };
time(deps.plain);
time(deps.protected);
for (let r = 0; r < ROUNDS; r++)
  for (const kind of r % 2 === 0 ? ['plain', 'protected'] : ['protected', 'plain'])
    results[kind].push(time(deps[kind]));
await Promise.all([deps.plain.close(), deps.protected.close()]);
const ratio = median(results.protected.map((p, r) => p / results.plain[r]));
console.log(`Node ${process.version}; ${ROUNDS} rounds of ${READS} reads each, in turns`);
console.log(`plain:     ${median(results.plain).toFixed(0)} ns per overload() (median)`);
console.log(`protected: ${median(results.protected).toFixed(0)} ns per overload() (median)`);
console.log(`protected ÷ plain, round by round: median ${ratio.toFixed(2)}`);
