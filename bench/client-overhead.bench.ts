/**
 * The client's own cost per call, without the network: dependency().request() over a transport
 * that answers on the next turn of the event loop, against awaiting that transport directly; 32
 * calls in flight. Steadier than the end-to-end benchmark on a shared machine, because no socket
 * and no other process is involved.
 *
 *   node --expose-gc --import tsx bench/client-overhead.bench.ts
 */
import { dependencyOver } from '../src/testing/test-dependency.js';
import type { Transport, TransportResponse } from '../src/transport/transport.js';
import { type BenchVariant, cpuPerCallRounds } from './support/cpu-rounds.js';
import { onNextTurn } from './support/next-turn.js';

const CALLS = 300_000;
const CONCURRENCY = 32;

function body() {
  return {
    text: async () => '{"ok":true}',
    json: async () => ({ ok: true }),
    bytes: async () => new Uint8Array(0),
    arrayBuffer: async () => new ArrayBuffer(0),
    dump: async () => null,
    destroy() {},
    async *[Symbol.asyncIterator]() {},
  };
}

function answer(): Promise<TransportResponse> {
  return onNextTurn(() => ({
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: body(),
  }));
}
const transport = (o: { origins: readonly string[] }): Transport => ({
  origins: o.origins,
  send: () => answer(),
  close: async () => {},
});

const variants: BenchVariant[] = [
  {
    name: 'transport alone',
    make: () => ({
      async call() {
        await (await answer()).body.text();
      },
      close: async () => {},
    }),
  },
  {
    name: 'prazo, one instance, no listener',
    make() {
      const dep = dependencyOver(
        { name: 'o', origins: ['http://127.0.0.1:1'], latency: { p99Ms: 500 }, userDeadlineMs: 5_000 },
        transport,
      );
      return {
        call: async () => void (await (await dep.request({ path: '/' })).body.text()),
        close: () => dep.close(),
      };
    },
  },
  {
    // The same with both overload protections on. The concurrency limit's floor is set above the
    // calls in flight, so that no call ever waits for a slot: what is left is their own cost per
    // call on the healthy path (a slot taken and given back, the limit's sample, the throttle's
    // check and count). With `concurrency: true` a new dependency would spend most of each round
    // learning its limit from `minLimit` (4) and `initialLimit` (20), below the 32 in flight.
    name: 'prazo, one instance, no listener, overload protections (no call waits)',
    make() {
      const dep = dependencyOver(
        {
          name: 'o',
          origins: ['http://127.0.0.1:1'],
          latency: { p99Ms: 500 },
          userDeadlineMs: 5_000,
          concurrency: { minLimit: 64, initialLimit: 64 },
          throttle: true,
        },
        transport,
      );
      return {
        call: async () => void (await (await dep.request({ path: '/' })).body.text()),
        close: () => dep.close(),
      };
    },
  },
  {
    name: 'prazo, two instances, hedge armed, request-end listener',
    make() {
      const dep = dependencyOver(
        {
          name: 'o',
          origins: ['http://127.0.0.1:1', 'http://127.0.0.1:2'],
          latency: { p99Ms: 500, p95Ms: 100 },
          userDeadlineMs: 5_000,
          hedge: { at: 'p95' },
        },
        transport,
      );
      dep.on('request-end', () => {});
      return {
        call: async () => void (await (await dep.request({ path: '/' })).body.text()),
        close: () => dep.close(),
      };
    },
  },
];

const results = await cpuPerCallRounds(variants, { rounds: 5, calls: CALLS, concurrency: CONCURRENCY });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(results.get('transport alone')!);
console.log(
  `${CALLS} calls per round, ${CONCURRENCY} in flight, median of 4 rounds; Node ${process.version}\n`,
);
console.log('| variant | CPU µs per call | added by prazo, µs |');
console.log('| --- | ---: | ---: |');
for (const [name, xs] of results) {
  const m = median(xs);
  console.log(`| ${name} | ${m.toFixed(2)} | ${name === 'transport alone' ? '—' : (m - base).toFixed(2)} |`);
}
