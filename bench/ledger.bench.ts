/**
 * What the deadline ledger costs a call: client CPU per call of dependency().request() with the
 * ledger unread, and with it read (its entries and its one-line summary), against awaiting the
 * transport alone, in the same run; 32 calls in flight, no network. The transport behaves as
 * prazo's undici transport does for a small answer: it says when the request is written (the end of
 * the connect phase), resolves the headers, and the body (an `IncomingBody`) has ended by the time
 * the caller reads it.
 *
 * The ledger is always kept; what it adds to a call that nobody reads it on is measured against a
 * build of prazo without it, when one is given (the commit before the ledger, built with tsup):
 *
 *   node --expose-gc --import tsx bench/ledger.bench.ts
 *   PRAZO_BENCH_BASELINE=/tmp/prazo-before/dist/index.js node --expose-gc --import tsx bench/ledger.bench.ts
 */
import type { dependency } from '../src/client/dependency.js';
import { dependencyOver } from '../src/testing/test-dependency.js';
import { IncomingBody } from '../src/transport/incoming-body.js';
import type { OutgoingRequest, Transport, TransportResponse } from '../src/transport/transport.js';
import { type BenchVariant, cpuPerCallRounds } from './support/cpu-rounds.js';
import { onNextTurn } from './support/next-turn.js';

const CALLS = 200_000;
const CONCURRENCY = 32;
const ROUNDS = 7;
const CHUNK = Buffer.from('{"ok":true}');
const SOURCE = { resume() {}, stop() {} };

function answer(request: OutgoingRequest | null): Promise<TransportResponse> {
  return onNextTurn(() => {
    request?.written?.();
    const body = new IncomingBody(SOURCE);
    body.push(CHUNK);
    body.end();
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
  });
}
const transport = (o: { origins: readonly string[] }): Transport => ({
  origins: o.origins,
  send: (request) => answer(request),
  close: async () => {},
});

/** A baseline build's `dependency()`, which took its transport as a second argument then. */
type MakeDependency = (...args: [...Parameters<typeof dependency>, unknown]) => ReturnType<typeof dependency>;
const options = {
  name: 'o',
  origins: ['http://127.0.0.1:1'],
  latency: { p99Ms: 500 },
  userDeadlineMs: 5_000,
};

let sink = 0;
const variants: BenchVariant[] = [
  {
    name: 'transport alone',
    make: () => ({
      async call() {
        await (await answer(null)).body.text();
      },
      close: async () => {},
    }),
  },
  {
    name: 'prazo, ledger unread',
    make() {
      const dep = dependencyOver(options, transport);
      return {
        async call() {
          await (await dep.request({ path: '/' })).body.text();
        },
        close: () => dep.close(),
      };
    },
  },
  {
    name: 'prazo, ledger read (entries + summary)',
    make() {
      const dep = dependencyOver(options, transport);
      return {
        async call() {
          const res = await dep.request({ path: '/' });
          await res.body.text();
          sink += res.ledger.entries.length + res.ledger.summary().length;
        },
        close: () => dep.close(),
      };
    },
  },
];

const baselinePath = process.env['PRAZO_BENCH_BASELINE'];
if (baselinePath !== undefined) {
  const baseline = (await import(baselinePath)) as { dependency: MakeDependency };
  variants.splice(1, 0, {
    name: 'prazo without the ledger (baseline build)',
    make() {
      const dep = baseline.dependency(options, { transport } as never);
      return {
        async call() {
          await (await dep.request({ path: '/' })).body.text();
        },
        close: () => dep.close(),
      };
    },
  });
}

const results = await cpuPerCallRounds(variants, { rounds: ROUNDS, calls: CALLS, concurrency: CONCURRENCY });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const unread = median(results.get('prazo, ledger unread')!);
console.log(
  `${CALLS} calls per round, ${CONCURRENCY} in flight, median of ${ROUNDS - 1} rounds; Node ${process.version} (checksum ${sink % 10})\n`,
);
console.log('| variant | CPU µs per call | vs prazo with the ledger unread, µs |');
console.log('| --- | ---: | ---: |');
for (const [name, xs] of results) {
  const m = median(xs);
  console.log(`| ${name} | ${m.toFixed(2)} | ${(m - unread).toFixed(2)} |`);
}
