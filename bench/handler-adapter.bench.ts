/**
 * What undici 7's adapter for controller-style handlers costs prazo's exchange, without the
 * network: 300 000 exchanges (request start, response head with three headers, one chunk, end)
 * driven through undici 7's own `UnwrapHandler` — as a `Pool` on undici 7 drives them — against the
 * same exchanges called directly with a controller per request, as undici 8 calls them. Rounds
 * alternate; medians of 12 rounds after 2 discarded.
 *
 *   node --expose-gc --import tsx bench/handler-adapter.bench.ts   # undici 7 only
 */
import { createRequire } from 'node:module';
import { util } from 'undici';
import { Exchange, type RequestController } from '../src/transport/exchange.js';
import type { AbortLike } from '../src/transport/transport.js';

interface LegacyHandler {
  onConnect(abort: () => void, context: unknown): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: Buffer[]): void;
}
// Not exported by undici: its internal module, present on undici 7 only.
const UnwrapHandler = createRequire(import.meta.url)('undici/lib/handler/unwrap-handler.js') as {
  unwrap(handler: object): LegacyHandler;
};

const EXCHANGES = 300_000;
const signal: AbortLike = {
  aborted: false,
  reason: undefined,
  addEventListener() {},
  removeEventListener() {},
};
const rawHeaders = [
  'content-type',
  'application/json',
  'content-length',
  '11',
  'date',
  'Thu, 03 Dec 2026',
].map((s) => Buffer.from(s));
const chunk = Buffer.from('{"ok":true}');
const noop = (): void => {};

class Controller implements RequestController {
  paused = false;
  abort(): void {}
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

function direct(): void {
  const controller = new Controller();
  const exchange = new Exchange();
  exchange.open(signal, undefined);
  exchange.onRequestStart(controller, null);
  exchange.onResponseStart(controller, 200, util.parseHeaders(rawHeaders), 'OK');
  exchange.onResponseData(controller, chunk);
  exchange.onResponseEnd(controller, util.parseHeaders([]));
}

function adapted(): void {
  const exchange = new Exchange();
  exchange.open(signal, undefined);
  const handler = UnwrapHandler.unwrap(exchange);
  handler.onConnect(noop, undefined);
  handler.onHeaders(200, rawHeaders, noop, 'OK');
  handler.onData(chunk);
  handler.onComplete([]);
}

async function round(run: () => void): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < EXCHANGES; i++) run();
  const ns = Number(process.hrtime.bigint() - t0) / EXCHANGES;
  await new Promise((resolve) => setImmediate(resolve));
  return ns;
}

const variants = [
  { name: 'called directly (as undici 8 calls it)', run: direct, ns: [] as number[] },
  { name: "through undici 7's UnwrapHandler", run: adapted, ns: [] as number[] },
];
for (let r = 0; r < 14; r++) {
  for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
    globalThis.gc?.();
    const ns = await round(v.run);
    if (r >= 2) v.ns.push(ns);
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
console.log(`${EXCHANGES} exchanges per round, median of 12 rounds; Node ${process.version}\n`);
console.log('| exchange | ns per exchange |\n| --- | ---: |');
for (const v of variants) console.log(`| ${v.name} | ${median(v.ns).toFixed(0)} |`);
console.log(
  `\nadded by the adapter: ${(median(variants[1]!.ns) - median(variants[0]!.ns)).toFixed(0)} ns per request`,
);
