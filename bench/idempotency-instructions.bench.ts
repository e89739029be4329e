/**
 * The server idempotency layer's cost, counted in instructions: what `createIdempotency()` (the
 * in-memory store, its defaults) adds to a keyed `POST` served by the `node:http` deadline adapter,
 * against the same adapter and handler without it.
 *
 * `idempotency.bench.ts` compares server CPU time, and on this shared 2-core virtual machine two
 * identical server processes differ by up to 20 % in a run and one round against the next by
 * 10–30 %: more than the 5 % the question is. An instruction count does not move with the machine.
 * The server process (`support/idempotency-server.mjs`: both servers in one process, on two ports)
 * runs under Valgrind's callgrind with V8 single-threaded (`support/instructions.mjs`), so the
 * compiler and the garbage collector run on the counted thread at points set by what the process
 * executed. This process drives it: keyed POSTs (a new key each), `--concurrency` in flight on
 * keep-alive connections, a warm-up on each port, then `--pairs` pairs of `--requests`-request
 * segments, the two servers in turn (ABBA: A B, B A, A B …), each segment's instructions read from
 * callgrind's counters before and after it. Each pair gives one ratio. A segment that follows one on
 * the other port counts 1 000–2 500 instructions a request more than one that follows its own port
 * (its connections and code cold again): in an AB pair the layer pays that switch, in a BA pair the
 * adapter, so the ratios of the two kinds of pair differ (1.06 and 1.04 in a first run). The
 * figure is the geometric mean of the two kinds' medians: each server pays the switch equally.
 *
 * What the count includes: everything the server process executes for a request — Node's HTTP
 * parser and socket writes, the adapter, the handler, and for the layer its key, claim, capture,
 * store and completion. Per unit of time rather than per request, the layer's store sweeps expired
 * records; under Valgrind a request takes about 200 times longer (8 ms of the server's time against
 * 40 µs), so that work is spread over 200 times fewer requests than at native speed (a bias against
 * the layer).
 *
 *   npm run build && node --import tsx bench/idempotency-instructions.bench.ts \
 *     [--pairs 16] [--requests 1000] [--warmup 25000] [--concurrency 4] [--uuid-keys] [--answer-chars N] \
 *     [--deadline-header] [--json]
 *
 * The keys are short (`"bench-12345"`, 11–13 characters) unless `--uuid-keys`: then each is a random
 * UUID as prazo's client mints them (`idempotencyKey: 'auto'`, 36 characters). The layer reads, hashes
 * and stores a key character by character, so its cost grows with the key's length.
 *
 * The handler answers `{"order":24}` (12 characters) unless `--answer-chars N`: then a JSON document
 * of N characters, which the layer keeps and stores for replay.
 *
 * `--deadline-header`: each POST carries `x-deadline-epoch-ms`, 4 s ahead (under callgrind a request
 * takes ≈ 200 times as long), as every request from a prazo client does, and the servers trust it
 * (`trust: 'all'`, an internal hop between prazo services): the adapter reads it, and the layer
 * reads it again for the record's lifetime.
 *
 * Needs `valgrind` (Debian: `apt-get install -y valgrind`). About 8 minutes with the defaults here.
 * Not part of `npm test`.
 */
import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { haveCallgrind, instructionsOf, spawnCounted } from './support/instructions.mjs';
import { positiveArg as arg, median } from './support/load.js';

const PAIRS = arg('pairs', 16);
const REQUESTS = arg('requests', 1_000);
// Past twice the in-memory store's capacity (10 000 records): from the 10 001st keyed request on, each
// one evicts the oldest record, and that code must be compiled before the counts start. With a
// warm-up of 10 000 the first pairs counted the JIT's compilation of the eviction path (17 functions
// compiled in the layer's first 1 000 requests after such a warm-up on Node 24, `--trace-opt`; 0–1
// per 1 000 after 25 000).
const WARMUP = arg('warmup', 25_000);
const CONCURRENCY = arg('concurrency', 4);
const BODY = '{"item":42,"quantity":2}';
const UUID_KEYS = process.argv.includes('--uuid-keys');
const DEADLINE_HEADER = process.argv.includes('--deadline-header');

type Variant = 'adapter' | 'adapter + idempotency (memory)';
const VARIANTS: readonly Variant[] = ['adapter', 'adapter + idempotency (memory)'];

if (!haveCallgrind()) {
  console.log('valgrind (callgrind) is not installed: nothing counted. Debian: apt-get install -y valgrind');
  process.exit(0);
}

const ANSWER_CHARS = process.argv.includes('--answer-chars') ? arg('answer-chars', 12) : undefined;

const server = spawnCounted([
  fileURLToPath(new URL('./support/idempotency-server.mjs', import.meta.url)),
  ...(ANSWER_CHARS === undefined ? [] : ['--answer-chars', String(ANSWER_CHARS)]),
  ...(DEADLINE_HEADER ? ['--trust-all'] : []),
]);
const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
const lines = readline.createInterface({ input: server.stdout })[Symbol.asyncIterator]();
const first = await lines.next();
if (first.done) throw new Error(`the server under valgrind exited with ${await exited}`);
const { ports } = JSON.parse(first.value) as { ports: number[] };

const pools = ports.map(
  (port) =>
    new Pool(`http://127.0.0.1:${port}`, {
      connections: CONCURRENCY,
      // Under Valgrind a request takes milliseconds, and a segment's queue many of them.
      headersTimeout: 120_000,
      bodyTimeout: 120_000,
      keepAliveTimeout: 600_000,
    }),
);
let sequence = 0;
let failed = 0;

/** `count` keyed POSTs to `variant`'s port, `CONCURRENCY` in flight, each answered 201. */
async function load(variant: Variant, count: number): Promise<void> {
  const pool = pools[VARIANTS.indexOf(variant)]!;
  let left = count;
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left--;
      const res = await pool.request({
        path: '/orders',
        method: 'POST',
        body: BODY,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': UUID_KEYS ? `"${randomUUID()}"` : `"bench-${sequence++}"`,
          ...(DEADLINE_HEADER ? { 'x-deadline-epoch-ms': String(Date.now() + 4_000) } : {}),
        },
      });
      await res.body.dump();
      if (res.statusCode !== 201) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const started = Date.now();
for (const variant of VARIANTS) await load(variant, WARMUP);
console.error(`warm-up: ${WARMUP} requests on each port in ${((Date.now() - started) / 1000).toFixed(0)} s`);

const perRequest: Record<Variant, number[]> = { adapter: [], 'adapter + idempotency (memory)': [] };
const ratios: number[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  const order = pair % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
  for (const variant of order) {
    const before = instructionsOf(server.pid!);
    await load(variant, REQUESTS);
    perRequest[variant].push((instructionsOf(server.pid!) - before) / REQUESTS);
  }
  const ratio = perRequest['adapter + idempotency (memory)'][pair]! / perRequest.adapter[pair]!;
  ratios.push(ratio);
  console.error(
    `pair ${pair + 1}/${PAIRS}: adapter ${perRequest.adapter[pair]!.toFixed(0)}, layer ${perRequest['adapter + idempotency (memory)'][pair]!.toFixed(0)} instructions a request, ratio ${ratio.toFixed(3)}`,
  );
}
await Promise.all(pools.map((p) => p.close()));
server.stdin.end();
await exited;

const abPairs = ratios.filter((_, pair) => pair % 2 === 0);
const baPairs = ratios.filter((_, pair) => pair % 2 === 1);
const result = {
  node: process.version,
  pairs: PAIRS,
  requests: REQUESTS,
  warmup: WARMUP,
  concurrency: CONCURRENCY,
  keys: UUID_KEYS ? 'uuid' : 'short',
  deadlineHeader: DEADLINE_HEADER,
  answerChars: ANSWER_CHARS ?? 12,
  adapterPerRequest: Math.round(median(perRequest.adapter)),
  layerPerRequest: Math.round(median(perRequest['adapter + idempotency (memory)'])),
  ratio: Math.sqrt(median(abPairs) * median(baPairs)),
  ratioAdapterFirst: median(abPairs),
  ratioLayerFirst: median(baPairs),
  failed,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(result));
else {
  console.log(
    `Node ${result.node}; ${PAIRS} ABBA pairs of ${REQUESTS} keyed POSTs (${UUID_KEYS ? 'random UUID keys' : 'short keys'}, answers of ${result.answerChars} characters${DEADLINE_HEADER ? ', each with a deadline header' : ''}), ${CONCURRENCY} in flight, after ${WARMUP} on each port`,
  );
  console.log('| server | instructions per keyed POST (median of segments) |');
  console.log('| --- | ---: |');
  console.log(`| adapter | ${result.adapterPerRequest} |`);
  console.log(`| adapter + idempotency (memory) | ${result.layerPerRequest} |`);
  console.log(
    `\nlayer ÷ adapter: **${result.ratio.toFixed(3)}** (medians of the pairs: ${result.ratioAdapterFirst.toFixed(3)} with the adapter first, ${result.ratioLayerFirst.toFixed(3)} with the layer first); requests not answered 201: ${failed}`,
  );
}
