/**
 * What a caller's own event-loop stalls cost in read timeouts: `dependency().request` at 500 calls
 * a second for 4 s against a node:http server in a child process that answers in 12 ms, while this
 * process blocks its loop for 60 ms every 200 ms (a CPU-heavy handler, a long collection). The read
 * timeout is 28 ms (p99 20 ms × 1.4): every call in flight when a stall begins has its answer on the
 * socket before the stall ends, and its timeout due. Counts the attempts that ended `READ_TIMEOUT`
 * (each one sent again as a retry) and the calls that failed. Bounded: 2 000 calls, then it stops.
 *
 *   npm run build && node bench/loop-stall.mjs [--runs 3] [--prazo DIR]
 *
 * `--prazo DIR`: another checkout's build (a copy of an older commit, for an A/B in the same session);
 * the default is this one's `dist/`. Each run is a fresh process.
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

async function runOnce(prazoDir) {
  const { dependency } = createRequire(`${prazoDir}/`)(prazoDir);
  // The client benchmark's keep-alive server, answering in 12 ms.
  const server = fork(fileURLToPath(new URL('./keepalive-server.mjs', import.meta.url)), ['12']);
  const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.ports[0])));
  const dep = dependency({
    name: 'stalled-caller',
    origins: [`http://127.0.0.1:${port}`],
    latency: { p99Ms: 20 },
    userDeadlineMs: 2_000,
    attempts: 2,
  });
  let readTimeouts = 0;
  let ok = 0;
  let failed = 0;
  dep.on('attempt-end', (e) => {
    if (e.errorCode === 'READ_TIMEOUT') readTimeouts++;
  });
  for (let i = 0; i < 200; i++) await dep.request({ path: '/' }).then((r) => r.body.text());
  const rate = 500;
  const total = 2_000;
  const t0 = performance.now();
  const stalls = setInterval(() => {
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // The caller's own CPU work: the loop does nothing else meanwhile.
    }
  }, 200);
  const calls = [];
  await new Promise((resolve) => {
    let sent = 0;
    const sender = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
      for (; sent < due; sent++) {
        calls.push(
          dep.request({ path: '/' }).then(
            (r) => r.body.text().then(() => ok++),
            () => failed++,
          ),
        );
      }
      if (sent >= total) {
        clearInterval(sender);
        resolve();
      }
    }, 2);
  });
  clearInterval(stalls);
  await Promise.all(calls);
  const readMs = dep.policy().readMs;
  await dep.close();
  server.send('stop');
  return { ok, failed, readTimeouts, readMs };
}

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
if (process.argv.includes('--child')) {
  process.stdout.write(`${JSON.stringify(await runOnce(arg('prazo', here)))}\n`);
} else {
  const runs = Number(arg('runs', '3'));
  const prazo = arg('prazo', here);
  const self = fileURLToPath(import.meta.url);
  for (let run = 1; run <= runs; run++) {
    const child = fork(self, ['--child', '--prazo', prazo], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    await new Promise((resolve) => child.once('exit', resolve));
    const r = JSON.parse(out);
    console.log(
      `run ${run} (${prazo}): ${r.readTimeouts} attempts ended READ_TIMEOUT (read timeout ${r.readMs} ms), ${r.failed} of ${r.ok + r.failed} calls failed`,
    );
  }
}
