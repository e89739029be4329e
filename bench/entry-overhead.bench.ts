/**
 * What each entry point adds per call, without the network: undici's own `request()` and `fetch()`
 * and Node's global `fetch()` over an in-memory dispatcher that answers on the next turn of the event
 * loop, against the same calls through prazo's interceptor composed onto that dispatcher (what
 * `install()` does for the global `fetch`), and prazo's own `request()` and `fetch` facade. prazo is
 * the built package. CPU microseconds per call, `--concurrency` calls in flight (1 by default),
 * rounds alternating. Steadier than the end-to-end benchmark on a shared machine: no socket, no
 * server process.
 *
 *   npm run build && node --expose-gc --import tsx bench/entry-overhead.bench.ts [--calls 50000] [--rounds 5] [--concurrency 1]
 */
import { Dispatcher, fetch as undiciFetch } from 'undici';
import { importBuilt } from './support/load.js';

const { prazoInterceptor } = await importBuilt<typeof import('../src/index.js')>('index');

const ORIGIN = 'http://127.0.0.1:8080';
const RESPONSE_HEADERS = {
  'content-type': 'application/json',
  'content-length': '11',
  date: 'Thu, 03 Dec 2026 12:00:00 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=5',
};
const RAW_HEADERS = Object.entries(RESPONSE_HEADERS).flatMap(([k, v]) => [Buffer.from(k), Buffer.from(v)]);
const BODY = Buffer.from('{"ok":true}');

type AnyHandler = Record<string, ((...args: unknown[]) => unknown) | undefined>;

/**
 * Answers every request with 200 and an 11-byte JSON body on the next setImmediate, speaking the
 * controller API to a handler that has it and undici's older callbacks otherwise, as undici 7's
 * own dispatchers do.
 */
class InstantDispatcher extends Dispatcher {
  override dispatch(_opts: unknown, handler: AnyHandler): boolean {
    setImmediate(() => {
      if (typeof handler.onResponseStart === 'function') {
        const controller = {
          aborted: false,
          paused: false,
          reason: null,
          rawHeaders: RAW_HEADERS,
          abort() {},
          pause() {},
          resume() {},
        };
        try {
          handler.onRequestStart?.(controller, {});
        } catch (error) {
          // A handler refuses the request before it is written (prazo's attempt timed out while
          // it waited): as undici does, the request fails and the connection stays.
          handler.onResponseError?.(controller, error);
          return;
        }
        handler.onResponseStart(controller, 200, { ...RESPONSE_HEADERS }, 'OK');
        handler.onResponseData?.(controller, BODY);
        handler.onResponseEnd?.(controller, {});
        return;
      }
      try {
        handler.onConnect?.(() => {}, {});
      } catch (error) {
        handler.onError?.(error);
        return;
      }
      handler.onHeaders?.(200, RAW_HEADERS.slice(), () => {}, 'OK');
      handler.onData?.(BODY);
      handler.onComplete?.([]);
    });
    return true;
  }
  override async close(): Promise<void> {}
  override async destroy(): Promise<void> {}
}

const options = {
  name: 'bench',
  origins: [ORIGIN],
  latency: { p99Ms: 200, p95Ms: 50 },
  userDeadlineMs: 2_000,
  attempts: 2,
  hedge: { at: 'p95' as const },
};

type Variant = { name: string; call(): Promise<unknown> };
const instant = new InstantDispatcher();
const interceptor = prazoInterceptor({ dependencies: [options] });
const intercepted = instant.compose(interceptor);
// The interceptor's own dependency: dep.request() and dep.fetch() over the same dispatcher.
const facade = interceptor.dependencies.get('bench')!;
const variants: Variant[] = [
  {
    name: 'undici request()',
    call: async () => (await instant.request({ origin: ORIGIN, path: '/', method: 'GET' })).body.text(),
  },
  {
    name: 'prazo interceptor, request()',
    call: async () => (await intercepted.request({ origin: ORIGIN, path: '/', method: 'GET' })).body.text(),
  },
  {
    name: 'undici fetch()',
    call: async () => (await undiciFetch(`${ORIGIN}/`, { dispatcher: instant })).text(),
  },
  {
    name: "Node's global fetch()",
    call: async () => (await fetch(`${ORIGIN}/`, { dispatcher: instant } as unknown as RequestInit)).text(),
  },
  {
    name: "Node's global fetch(), intercepted",
    call: async () =>
      (await fetch(`${ORIGIN}/`, { dispatcher: intercepted } as unknown as RequestInit)).text(),
  },
  { name: 'prazo dep.fetch()', call: async () => (await facade.fetch('/')).text() },
  {
    name: 'prazo dep.request()',
    call: async () => (await facade.request({ path: '/' })).body.text(),
  },
];

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const calls = arg('calls', 50_000);
const rounds = arg('rounds', 5);
const concurrency = arg('concurrency', 1);
/** Calls that failed (an attempt timed out while the machine stalled the event loop). */
let failures = 0;

async function measure(variant: Variant, n: number): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const start = process.cpuUsage();
  let left = n;
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left--;
      try {
        await variant.call();
      } catch {
        // Under a stalled event loop an attempt may time out before its turn: counted, not fatal.
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const only = process.argv.indexOf('--only');
if (only !== -1)
  variants.splice(0, variants.length, ...variants.filter((v) => v.name.includes(process.argv[only + 1]!)));
for (const v of variants) await measure(v, 5_000);
const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let r = 0; r < rounds; r++) for (const v of variants) results.get(v.name)!.push(await measure(v, calls));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `CPU µs per call, median of ${rounds} rounds × ${calls} calls, ${concurrency} in flight (Node ${process.version})`,
);
for (const [name, xs] of results) {
  console.log(
    `${name.padEnd(32)} ${median(xs).toFixed(2).padStart(7)}   (${xs.map((x) => x.toFixed(2)).join(' / ')})`,
  );
}
if (failures > 0)
  console.log(
    `${failures} calls failed (timed out while the event loop stalled): rerun on a quieter machine.`,
  );
await interceptor.close();
