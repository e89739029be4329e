/**
 * prazo's entry points over an undici dispatcher that answers from memory: no socket, no HTTP
 * parser, no server process. What `bench/lean-client.mjs` measures over a real connection is
 * measured here without the connection's work and its run-to-run noise, so that what prazo adds to
 * a call — and how that differs between Node versions — can be told apart from the network's share.
 *
 *   npm run build && node bench/in-memory-dispatch.mjs [--modes pass-install,install] [--runs 7] \
 *     [--calls 20000] [--undici DIR] [--churn KB] [--headers]
 *
 * The dispatcher is a subclass of the application's undici `Dispatcher` whose `dispatch()` answers
 * every request on the next turn of the event loop (`setImmediate`) with a 200, two headers and an
 * 11-byte body, through undici's controller-based handler API, as an undici 8 `Agent` does. Modes:
 * `pass` (that dispatcher composed with an interceptor that hands every request on as it is, called
 * with `request()`), `interceptor` (composed with prazo's interceptor), `pass-install` (the global
 * `fetch` on it composed with the pass-through, set with undici's `setGlobalDispatcher()`) and
 * `install` (the global `fetch` after `install()` over it). Each run is a fresh client process (on
 * CPU 0 where there are two), 32 calls in flight, the modes alternating; the output is the client
 * CPU per call, the scavenges of the measured calls and their pauses (the main thread's, from
 * `--trace-gc-nvp`, per call), as in `bench/lean-client.mjs`, and the bytes
 * allocated per call (V8's count on Node 26; on older Node the collections' `allocated`, summed:
 * it leaves out what came after the last one, and reads a little low).
 * `--undici DIR`: the application's undici is the one installed under `DIR` (`npm install --prefix
 * DIR undici@8`), loaded before prazo; without it, prazo's own copy.
 *
 * Two options make the `request()` modes look like the global `fetch`'s, to tell what prazo does on
 * the `fetch` path from what the `fetch` path does to prazo: `--headers` has every `request()` send
 * the five headers Node's `fetch` sends (a fresh record per request, as `fetch` builds one), and
 * `--churn KB` has the dispatcher allocate and touch about `KB` kilobytes of short-lived objects per
 * request before it answers (in every mode), standing in for the caller's own work per call (the
 * global `fetch` allocates ≈ 35 KB a call); the KB allocated per call the script prints include it.
 */

import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchDependency, measuredCalls, median, requireBuild, runTraced } from './support/gc-trace.mjs';

const SELF = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};

/** The origin the dependency is declared on; nothing listens there (the dispatcher answers). */
const ORIGIN = 'http://127.0.0.1:8080';

/** Small objects `--churn` makes per request, per KB: ≈ 100 bytes each (an object, a one-item array, a slot). */
const CHURN_ITEMS_PER_KB = 10;

/** The headers Node's global `fetch` sends with a plain `fetch(url)` (`--headers`). */
const FETCH_HEADERS = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};

/** An interceptor that changes nothing: what composing costs before any policy. */
const passThrough = (dispatch) => (opts, handler) => dispatch(opts, handler);

async function child(mode, calls) {
  const dir = arg('undici');
  const undici = await import(
    dir === undefined ? 'undici' : pathToFileURL(join(dir, 'node_modules', 'undici', 'index.js')).href
  );
  const { install, prazoInterceptor } = await import(new URL('../dist/index.js', import.meta.url).href);
  const rawHeaders = [
    Buffer.from('content-type'),
    Buffer.from('application/json'),
    Buffer.from('content-length'),
    Buffer.from('11'),
  ];
  const headers = { 'content-type': 'application/json', 'content-length': '11' };
  const body = Buffer.from('{"ok":true}');
  const churn = Math.round(Number(arg('churn', '0')) * CHURN_ITEMS_PER_KB);
  let kept = 0;
  class MemoryDispatcher extends undici.Dispatcher {
    dispatch(_opts, handler) {
      if (churn > 0) {
        const items = new Array(churn);
        for (let i = 0; i < churn; i++) items[i] = { i, next: [i] };
        kept ^= items[churn >> 1].next[0];
      }
      const controller = {
        rawHeaders,
        aborted: false,
        paused: false,
        abort() {
          this.aborted = true;
        },
        pause() {},
        resume() {},
      };
      setImmediate(() => {
        // A handler may refuse the request here (an attempt prazo already ended throws): as undici
        // does, that fails this request alone.
        try {
          handler.onRequestStart(controller, {});
        } catch (error) {
          handler.onResponseError?.(controller, error);
          return;
        }
        handler.onResponseStart(controller, 200, headers, 'OK');
        handler.onResponseData(controller, body);
        handler.onResponseEnd(controller, {});
      });
      return true;
    }
    close() {
      return Promise.resolve();
    }
    destroy() {
      return Promise.resolve();
    }
  }
  const memory = new MemoryDispatcher();
  let call;
  if (mode === 'pass' || mode === 'interceptor') {
    const target = memory.compose(
      mode === 'pass' ? passThrough : prazoInterceptor({ dependencies: [benchDependency(ORIGIN)] }),
    );
    const sendHeaders = process.argv.includes('--headers');
    call = async () => {
      const { body: answer } = await target.request(
        sendHeaders
          ? { origin: ORIGIN, path: '/', method: 'GET', headers: { ...FETCH_HEADERS } }
          : { origin: ORIGIN, path: '/', method: 'GET' },
      );
      await answer.text();
    };
  } else {
    undici.setGlobalDispatcher(mode === 'pass-install' ? memory.compose(passThrough) : memory);
    if (mode === 'install') install({ dependencies: [benchDependency(ORIGIN)] });
    call = async () => {
      await (await fetch(`${ORIGIN}/`)).text();
    };
  }
  await measuredCalls(call, calls, 32);
  if (kept < 0) console.error(kept); // keeps the churn observable
  process.exit(0);
}

if (process.argv.includes('--child')) {
  await child(arg('child'), Number(arg('calls')));
} else {
  requireBuild('bench/in-memory-dispatch.mjs');
  const modes = arg('modes', 'pass-install,install').split(',');
  const runs = Number(arg('runs', '7'));
  const calls = Number(arg('calls', '20000'));
  const pinned = os.availableParallelism() >= 2;
  const results = new Map(modes.map((m) => [m, []]));
  for (let r = 0; r < runs; r++) {
    for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
      const args = [SELF, '--child', mode, '--calls', String(calls)];
      if (arg('undici') !== undefined) args.push('--undici', arg('undici'));
      if (arg('churn') !== undefined) args.push('--churn', arg('churn'));
      if (process.argv.includes('--headers')) args.push('--headers');
      const out = await runTraced(mode, args, pinned);
      results.get(mode).push(out);
      process.stderr.write(
        `run ${r + 1} ${mode}: ${out.cpuUs.toFixed(1)} µs/call, ${(out.bytes / calls / 1024).toFixed(2)} KB/call, ${out.scavenges} scavenges\n`,
      );
    }
  }
  const range = (values, digits) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const first = results.get(modes[0]);
  const lines = [
    `${calls} calls per run, 32 in flight, ${runs} runs per mode, each a fresh client process${pinned ? ' on CPU 0' : ''}, answers from memory; Node ${process.version}${arg('undici') === undefined ? ", prazo's undici" : `, undici from ${arg('undici')}`}${arg('churn') === undefined ? '' : `; --churn ${arg('churn')}`}${process.argv.includes('--headers') ? '; --headers' : ''}`,
    '',
    `| mode | client CPU µs/call (median, range) | scavenges (median) | scavenge pauses µs/call (median) | over ${modes[0]} (median of paired runs) | KB allocated/call (median, range) | over ${modes[0]} (median of paired runs) |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [mode, list] of results) {
    const added = list.map((x, r) => x.cpuUs - first[r].cpuUs);
    const kb = list.map((x) => x.bytes / calls / 1024);
    const addedKb = list.map((x, r) => (x.bytes - first[r].bytes) / calls / 1024);
    lines.push(
      `| ${mode} | ${range(
        list.map((x) => x.cpuUs),
        1,
      )} | ${median(list.map((x) => x.scavenges))} | ${median(list.map((x) => (x.scavenges * x.pauseMs * 1000) / calls)).toFixed(1)} | ${median(added) >= 0 ? '+' : ''}${median(added).toFixed(1)} µs | ${range(kb, 2)} | ${median(addedKb) >= 0 ? '+' : ''}${median(addedKb).toFixed(2)} KB |`,
    );
  }
  console.log(lines.join('\n'));
}
