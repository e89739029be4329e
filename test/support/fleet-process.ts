/**
 * One process of a fleet, for test/fleet-prometheus.test.ts: a prazo dependency `inventory` calling a
 * node:http double, its prazo/prometheus metrics on 127.0.0.1:<port>/metrics, a bounded load, and every
 * attempt's duration kept as a raw sample.
 *
 * Arguments: the double's seed, and the p99 the process is calibrated with (default 600 ms).
 * IPC: sends `{ port }` once listening; takes `'degrade'`, `'recover'` and `'stop'` (answers
 * `{ samples }` and exits).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDouble } from '@prazo/lab/double';
import { Registry } from 'prom-client';
import { dependency } from '../../src/client/dependency.js';
import { instrument } from '../../src/observe/prometheus.js';

const seed = Number(process.argv[2] ?? 1);
/** The p99 this process was calibrated with (its read timeout is ceil(p99 × 1.4)). */
const configuredP99Ms = Number(process.argv[3] ?? 600);
const HEALTHY = { latency: { type: 'lognormal', medianMs: 25, p99Ms: 60 } } as const;
const DEGRADED = { latency: { type: 'fixed', ms: 400 } } as const;
/** Calls in flight at once, and the pause between two calls of one worker (bounded load). */
const WORKERS = 2;
const PAUSE_MS = 20;

const double = await startDouble({ seed, behaviour: HEALTHY });
const inventory = dependency({
  name: 'inventory',
  origins: [double.url],
  // Generous by default: the degraded answers must be measured, not cut by a timeout.
  latency: { p99Ms: configuredP99Ms },
  userDeadlineMs: 3_000,
  attempts: 1,
});
const registry = new Registry();
instrument(inventory, { registry });
const samples: Array<[atMs: number, ms: number]> = [];
inventory.on('attempt-end', (e) => {
  if (e.outcome === 'success') samples.push([Date.now(), e.durationMs]);
});

const metrics = createServer((req, res) => {
  if (req.url !== '/metrics') {
    res.writeHead(404).end();
    return;
  }
  registry.metrics().then(
    (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
    () => res.writeHead(500).end(),
  );
});
metrics.listen(0, '127.0.0.1');
await once(metrics, 'listening');

let stopping = false;
const worker = async (): Promise<void> => {
  while (!stopping) {
    try {
      const res = await inventory.request({ path: '/' });
      await res.body.text();
    } catch {
      // counted as a failure by prazo's own metrics
    }
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
};
const workers = Array.from({ length: WORKERS }, worker);

process.on('message', (message) => {
  if (message === 'degrade') void double.set(DEGRADED);
  else if (message === 'recover') void double.set(HEALTHY);
  else if (message === 'stop') void stop();
});
process.on('disconnect', () => void stop());

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(workers);
  await inventory.close();
  await double.close();
  metrics.closeAllConnections();
  await new Promise((resolve) => metrics.close(resolve));
  if (process.connected) process.send?.({ samples }, () => process.disconnect());
}

process.send?.({ port: (metrics.address() as AddressInfo).port });
