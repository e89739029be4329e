/**
 * The in-memory idempotency store against keys chosen to collide: what a claim costs when a client
 * sends keys computed offline to share one cell of the store's hash table, next to keys drawn at
 * random, in the same store and process.
 *
 * The client chooses its keys. The crafted ones here are those a client could compute if the key
 * hash started from FNV-1a's published basis: each falls on cell 7 of the 32 768 cells of a store of
 * 10 000 records (≈ 33 000 tries a key). prazo's hash starts from a basis drawn once per process
 * (src/wire/key-hash.ts), so for prazo they are keys like any other; with the published basis they
 * would form one run that every claim walks, as long as the store holds them.
 *
 *   npm run build && node bench/idempotency-key-flood.mjs [--crafted 6000] [--rounds 5]
 *
 * Each round: a fresh store (its defaults) filled with 10 000 records of random keys (its slots and
 * table at their largest), then the crafted keys and as many random ones of the same form and length
 * (`order-` and a number), claimed in turn by blocks of 200, each kind first in every other block.
 * The figure is the time a claim of each kind (a synchronous loop: the main thread's time), and
 * their ratio. Finding the crafted keys takes a few seconds.
 *
 * The hash below is written out here rather than imported: it is the client's computation, from
 * what anyone can read, not prazo's code.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';

const built = new URL('../dist/http.js', import.meta.url);
if (!existsSync(built)) {
  console.error('The benchmark measures the built package: run `npm run build` first.');
  process.exit(2);
}
const { createMemoryIdempotencyStore } = await import(built.href);

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i === -1 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer`);
  return value;
};
const CRAFTED = arg('crafted', 6_000);
const ROUNDS = arg('rounds', 5);
/** Claims timed together, the two kinds in turn. */
const BLOCK = 200;

/** The key hash as it would be with FNV-1a's published basis: what a client can compute offline. */
function publishedHash(key) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * `key` as a flat string, as a header value is (a template literal of 13 characters or more is a
 * V8 `ConsString`, whose characters cost more to read): both kinds of key alike.
 */
const flat = (key) => Buffer.from(key, 'latin1').toString('latin1');

const crafted = [];
for (let i = 0; crafted.length < CRAFTED; i++) {
  const key = `order-${i}`;
  if ((publishedHash(key) & 32_767) === 7) crafted.push(flat(key));
}
/** Random keys of the same form and length as the crafted ones. */
const randomLike = (key) => flat(`order-${randomInt(10 ** (key.length - 7), 10 ** (key.length - 6))}`);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const perClaim = { crafted: [], random: [] };
for (let round = 0; round < ROUNDS; round++) {
  const store = createMemoryIdempotencyStore();
  // Full (its slots and table at their largest): no growth inside a timed block; each claim evicts the oldest.
  for (let i = 0; i < 10_000; i++) store.claim(randomUUID(), 'owner', 'POST /orders', 60_000);
  const random = crafted.map(randomLike);
  const spent = { crafted: 0, random: 0 };
  for (let from = 0, block = 0; from < CRAFTED; from += BLOCK, block++) {
    // The two kinds in turn, each first in every other block (A B, B A …).
    const kinds = block % 2 === 0 ? ['crafted', 'random'] : ['random', 'crafted'];
    for (const kind of kinds) {
      const keys = kind === 'crafted' ? crafted : random;
      const start = process.hrtime.bigint();
      for (let i = from; i < Math.min(from + BLOCK, CRAFTED); i++)
        store.claim(keys[i], 'owner', 'POST /orders', 60_000);
      spent[kind] += Number(process.hrtime.bigint() - start) / 1_000;
    }
  }
  for (const kind of ['crafted', 'random']) perClaim[kind].push(spent[kind] / CRAFTED);
}

console.log(
  `Node ${process.version}; ${ROUNDS} rounds of ${CRAFTED} crafted and ${CRAFTED} random keys, claimed in turn by blocks of ${BLOCK}`,
);
console.log('| keys | µs a claim (median of rounds) |');
console.log('| --- | ---: |');
for (const kind of ['crafted', 'random']) console.log(`| ${kind} | ${median(perClaim[kind]).toFixed(2)} |`);
console.log(`\ncrafted ÷ random: **${(median(perClaim.crafted) / median(perClaim.random)).toFixed(2)}**`);
