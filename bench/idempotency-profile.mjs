/**
 * Where the server idempotency layer's instructions go, function by function: the server of
 * `bench/idempotency-instructions.bench.ts` (`support/idempotency-server.mjs`) under callgrind, one
 * process per port (the adapter alone, the adapter with the layer), with V8's map of its compiled
 * code (`--perf-basic-prof`) so that the JIT's functions have names. Each process is driven through a
 * warm-up with callgrind's instrumentation off, then counted over `--requests` keyed POSTs; the table
 * is each function's own instructions per request in both, largest difference first.
 *
 *   npm run build && node bench/idempotency-profile.mjs [--warmup 25000] [--requests 3000] [--top 40] [--uuid-keys] [--deadline-header] [--alternate [--pairs 3]]
 *
 * `--deadline-header`: each POST carries `x-deadline-epoch-ms`, as a prazo client's requests do, and
 * the servers trust it (`trust: 'all'`, as `bench/idempotency-instructions.bench.ts --deadline-header`).
 *
 * `--alternate [--pairs 3]`: one process serves both ports, driven in turns (A B, B A …) as
 * `idempotency-instructions.bench.ts` drives its one, each turn of `--requests` counted apart and
 * summed by port. Node's code then meets requests of both kinds, as in a server whose layer sees
 * only some of its requests (keyed writes among reads): what that costs each kind — the compiler's
 * work after a deoptimisation, for one — shows against the separate processes' figures. The table
 * ends with the difference by kind of code (the JIT's compilers, the collector, the layer's own
 * functions, the rest).
 *
 * A process's total moves by ±3 % from one run to the next (a collection falls in the counted
 * requests or not: the collector's functions lead the differences then); `idempotency-instructions`
 * is the figure for the layer's cost. This one says which functions make it: those of the layer
 * (its file in `dist/`), Node's own that the layer makes run (a second enumeration of a response's
 * headers: `GetOwnEnumPropertyDictionaryKeys`), and the JIT's tier of each (`*` optimised by
 * TurboFan, `+` by Maglev, `~` not). The two processes optimise Node's code at different points, so
 * its functions trade places between tiers and appear in pairs.
 *
 * Needs `valgrind` (Debian: `apt-get install -y valgrind`; `callgrind_annotate` comes with it).
 * About a minute with the defaults here (the two processes in parallel; the warm-up runs uncounted). Not part of `npm test`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { haveCallgrind } from './support/instructions.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer`);
  return value;
};
const WARMUP = arg('warmup', 25_000);
const REQUESTS = arg('requests', 3_000);
const TOP = arg('top', 40);
const UUID_KEYS = process.argv.includes('--uuid-keys');
const DEADLINE_HEADER = process.argv.includes('--deadline-header');
const ALTERNATE = process.argv.includes('--alternate');
const PAIRS = ALTERNATE ? arg('pairs', 3) : 1;

const JIT = 'the JIT (compilers, deoptimisation)';
/** The kinds of code the table's end sums by (a function is the first whose pattern matches its name). */
const KINDS = [
  [JIT, /compiler::|maglev|Maglev|Turboshaft|turboshaft|Optimize|Compil|Deoptimiz|baseline|Baseline/],
  ['the collector', /Scaveng|Heap::|heap::|Mark|Sweep|Evacuat|IterateObjectCache|Visitor/],
  ["prazo's own functions (dist/)", /dist\/chunk/],
];
const kindOf = (name) => KINDS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'the rest';
const SERVER = fileURLToPath(new URL('./support/idempotency-server.mjs', import.meta.url));

if (!haveCallgrind()) {
  console.log('valgrind (callgrind) is not installed: nothing counted. Debian: apt-get install -y valgrind');
  process.exit(0);
}
if (!existsSync(new URL('../dist/http.js', import.meta.url))) {
  console.error('The benchmark measures the built package: run `npm run build` first.');
  process.exit(2);
}

/**
 * One server process under callgrind, driven on the ports `driven` (0 the adapter, 1 the layer): the
 * counts by function of each port's turns (one turn for one port; `PAIRS` pairs of turns for two),
 * and each turn's port and the JIT's instructions a request in it, in the order of the turns.
 */
async function profile(driven, withHeader = DEADLINE_HEADER) {
  const out = join(tmpdir(), `prazo-idempotency-profile-${process.pid}-${driven.join('')}.out`);
  const logs = mkdtempSync(join(tmpdir(), 'prazo-idempotency-profile-'));
  const server = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      process.execPath,
      '--single-threaded',
      '--perf-basic-prof',
      SERVER,
      ...(DEADLINE_HEADER ? ['--trust-all'] : []),
    ],
    // Its working directory a temporary one: V8 writes its code log (`isolate-…-v8.log`) there.
    { stdio: ['pipe', 'pipe', 'ignore'], cwd: logs },
  );
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const lines = readline.createInterface({ input: server.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`the server under valgrind exited with ${await exited}`);
  const ports = JSON.parse(first.value).ports;
  const pools = ports.map(
    (port) =>
      new Pool(`http://127.0.0.1:${port}`, {
        connections: 4,
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
        keepAliveTimeout: 600_000,
      }),
  );
  let sequence = 0;
  const load = async (which, count) => {
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left--;
        const res = await pools[which].request({
          path: '/orders',
          method: 'POST',
          body: '{"item":42,"quantity":2}',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': UUID_KEYS ? `"${randomUUID()}"` : `"bench-${sequence++}"`,
            ...(withHeader ? { 'x-deadline-epoch-ms': String(Date.now() + 4_000) } : {}),
          },
        });
        await res.body.dump();
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  };
  const control = (...args) =>
    execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore' });
  // Each turn is a dump of its own (numbered from 1 in the order asked for).
  const turns = [];
  try {
    for (const which of driven) await load(which, WARMUP);
    control('-i', 'on');
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const which of pair % 2 === 0 ? driven : [...driven].reverse()) {
        control('-z');
        await load(which, REQUESTS);
        control('-d');
        turns.push(which);
      }
    }
    control('-i', 'off');
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    server.stdin.end();
    await exited;
  }
  const mapFile = `/tmp/perf-${server.pid}.map`;
  const code = existsSync(mapFile) ? codeMap(readFileSync(mapFile, 'utf8')) : [];
  const counts = new Map(driven.map((which) => [which, new Map()]));
  const jitByTurn = turns.map((which, i) => {
    const dump = `${out}.${i + 1}`;
    const annotated = execFileSync('callgrind_annotate', ['--threshold=100', dump], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const sum = counts.get(which);
    let jit = 0;
    for (const [name, n] of byFunction(annotated, code)) {
      sum.set(name, (sum.get(name) ?? 0) + n);
      if (kindOf(name) === JIT) jit += n;
    }
    rmSync(dump, { force: true });
    return { which, jitPerRequest: jit / REQUESTS };
  });
  for (const file of [out, mapFile, logs]) rmSync(file, { force: true, recursive: true });
  return { counts, jitByTurn };
}

/** V8's map of compiled code: start, size, name per line (the last entry for an address wins). */
function codeMap(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (name.length > 0)
      entries.push({
        start: Number.parseInt(start, 16),
        size: Number.parseInt(size, 16),
        name: name.join(' '),
      });
  }
  return entries;
}

/** Instructions per function from `callgrind_annotate`, the JIT's addresses named from `code`. */
function byFunction(annotated, code) {
  const counts = new Map();
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (match === null || line.includes('PROGRAM TOTALS')) continue;
    let name = match[2].replace(/\s*\[[^\]]*\]$/, '').trim();
    // A recursive call's entry is marked `'2`, `'3` …
    const address = /^\?\?\?:0x([0-9a-f]+)(?:'\d+)?$/.exec(name);
    if (address !== null) {
      const at = Number.parseInt(address[1], 16);
      let found = 'the JIT, unnamed';
      for (const entry of code) if (entry.start <= at && at < entry.start + entry.size) found = entry.name;
      name = `JS ${found.replace(/^JS:/, '').replace(/file:\/\/\S*\/dist\//, 'dist/')}`;
    } else name = name.replace(/^\?\?\?:/, '');
    counts.set(name, (counts.get(name) ?? 0) + Number(match[1].replaceAll(',', '')));
  }
  return counts;
}

const started = Date.now();
const profiles = ALTERNATE ? [await profile([0, 1])] : await Promise.all([profile([0]), profile([1])]);
const [adapter, layer] = profiles.flatMap(({ counts }) => [...counts.values()]);
const jitByTurn = profiles.flatMap((p) => p.jitByTurn);
const counted = REQUESTS * PAIRS;
const total = (counts) => [...counts.values()].reduce((a, b) => a + b, 0) / counted;
const all = [...new Set([...adapter.keys(), ...layer.keys()])].map((name) => {
  const a = (adapter.get(name) ?? 0) / counted;
  const l = (layer.get(name) ?? 0) / counted;
  return { name, a, l, d: l - a };
});
const rows = [...all].sort((x, y) => Math.abs(y.d) - Math.abs(x.d)).slice(0, TOP);
console.log(
  `${process.version}; ${ALTERNATE ? `${PAIRS} pairs of turns of ${REQUESTS}` : REQUESTS} keyed POSTs counted after ${WARMUP} on each port (${UUID_KEYS ? 'UUID' : 'short'} keys), ${ALTERNATE ? 'both ports in one process' : 'one process a port'}, ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
console.log(
  `instructions a request: adapter ${total(adapter).toFixed(0)}, layer ${total(layer).toFixed(0)}\n`,
);
console.log(
  '| layer − adapter | adapter | layer | function (JS: `*` TurboFan, `+` Maglev, `~` not optimised) |',
);
console.log('| ---: | ---: | ---: | --- |');
for (const { name, a, l, d } of rows)
  console.log(
    `| ${d.toFixed(0)} | ${a.toFixed(0)} | ${l.toFixed(0)} | ${name.slice(0, 110).replaceAll('|', '\\|')} |`,
  );

const byKind = new Map([...KINDS.map(([kind]) => [kind, { a: 0, l: 0 }]), ['the rest', { a: 0, l: 0 }]]);
for (const { name, a, l } of all) {
  const sum = byKind.get(kindOf(name));
  sum.a += a;
  sum.l += l;
}
console.log('\n| kind of code | adapter | layer | layer − adapter |');
console.log('| --- | ---: | ---: | ---: |');
for (const [kind, { a, l }] of byKind)
  console.log(`| ${kind} | ${a.toFixed(0)} | ${l.toFixed(0)} | ${(l - a).toFixed(0)} |`);
console.log(
  `\nthe JIT's instructions a request, turn by turn: ${jitByTurn.map(({ which, jitPerRequest }) => `${which === 0 ? 'adapter' : 'layer'} ${jitPerRequest.toFixed(0)}`).join(', ')}`,
);
