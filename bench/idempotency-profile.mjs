/**
 * Where the server idempotency layer's instructions go, function by function: the server of
 * `bench/idempotency-instructions.bench.ts` (`support/idempotency-server.mjs`) under callgrind, one
 * process per port (the adapter alone, the adapter with the layer), with V8's map of its compiled
 * code (`--perf-basic-prof`) so that the JIT's functions have names. Each process is driven through a
 * warm-up with callgrind's instrumentation off, then counted over `--requests` keyed POSTs; the table
 * is each function's own instructions per request in both, largest difference first.
 *
 *   npm run build && node bench/idempotency-profile.mjs [--warmup 25000] [--requests 3000] [--top 40] [--uuid-keys] [--deadline-header]
 *
 * `--deadline-header`: each POST carries `x-deadline-epoch-ms`, as a prazo client's requests do, and
 * the servers trust it (`trust: 'all'`, as `bench/idempotency-instructions.bench.ts --deadline-header`).
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
const SERVER = fileURLToPath(new URL('./support/idempotency-server.mjs', import.meta.url));

if (!haveCallgrind()) {
  console.log('valgrind (callgrind) is not installed: nothing counted. Debian: apt-get install -y valgrind');
  process.exit(0);
}
if (!existsSync(new URL('../dist/http.js', import.meta.url))) {
  console.error('The benchmark measures the built package: run `npm run build` first.');
  process.exit(2);
}

/** One server process under callgrind, driven on port `which` (0 the adapter, 1 the layer): its counts by function. */
async function profile(which, withHeader = DEADLINE_HEADER) {
  const out = join(tmpdir(), `prazo-idempotency-profile-${process.pid}-${which}.out`);
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
  const port = JSON.parse(first.value).ports[which];
  const pool = new Pool(`http://127.0.0.1:${port}`, {
    connections: 4,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    keepAliveTimeout: 600_000,
  });
  let sequence = 0;
  const load = async (count) => {
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left--;
        const res = await pool.request({
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
  try {
    await load(WARMUP);
    control('-i', 'on');
    await load(REQUESTS);
    control('-i', 'off');
    control('-d');
  } finally {
    await pool.close();
    server.stdin.end();
    await exited;
  }
  // The dump asked for is the file's first part (the second is the process's end, counted with nothing on).
  const dump = `${out}.1`;
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', dump], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const mapFile = `/tmp/perf-${server.pid}.map`;
  const code = existsSync(mapFile) ? codeMap(readFileSync(mapFile, 'utf8')) : [];
  for (const file of [out, dump, mapFile, logs]) rmSync(file, { force: true, recursive: true });
  return byFunction(annotated, code);
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
const [adapter, layer] = await Promise.all([profile(0), profile(1)]);
const total = (counts) => [...counts.values()].reduce((a, b) => a + b, 0) / REQUESTS;
const rows = [...new Set([...adapter.keys(), ...layer.keys()])]
  .map((name) => {
    const a = (adapter.get(name) ?? 0) / REQUESTS;
    const l = (layer.get(name) ?? 0) / REQUESTS;
    return { name, a, l, d: l - a };
  })
  .sort((x, y) => Math.abs(y.d) - Math.abs(x.d))
  .slice(0, TOP);
console.log(
  `${process.version}; ${REQUESTS} keyed POSTs counted after ${WARMUP} on each port (${UUID_KEYS ? 'UUID' : 'short'} keys), one process a port, ${((Date.now() - started) / 1000).toFixed(0)} s`,
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
