/**
 * Entry of a drill service process (forked by the drill; not for direct use). The first IPC message
 * is the service's spec; the process answers `ready` with its port, then serves RPC requests until
 * `close` — or exits on its own when the drill goes away (the IPC channel closes).
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type Load, startLoad, type UserResult } from './load-driver.js';
import type { LoadSpec, ServiceMessage, ServiceRequest, ServiceSpec } from './spec.js';
import { type SupplierService, startSupplier } from './supplier.js';
import { startTier, type TierService } from './tier.js';

const send = (message: ServiceMessage): void => {
  if (process.connected) process.send?.(message);
};

let service: SupplierService | TierService | LoadService | undefined;

/** A load driver waiting for its start instant. */
interface LoadService {
  readonly port: number;
  start(startAtMs: number): void;
  close(): Promise<void>;
}

const BATCH_MS = 200;

function prepareLoad(spec: LoadSpec): LoadService {
  let load: Load | undefined;
  let batch: UserResult[] = [];
  let flusher: NodeJS.Timeout | undefined;
  const flush = () => {
    if (batch.length === 0) return;
    send({ type: 'results', results: batch });
    batch = [];
  };
  return {
    port: 0,
    start(startAtMs) {
      // Both configurations' drivers start at the same wall-clock instant, so their arrivals coincide.
      setTimeout(
        () => {
          load = startLoad({
            targets: [{ config: spec.config, url: spec.url }],
            rps: spec.rps,
            checkoutShare: spec.checkoutShare,
            userDeadlineMs: spec.userDeadlineMs,
            durationMs: spec.preMs + spec.durationMs,
            // The first `preMs` warm the processes up (JIT, connections, heap) and are not measured.
            onResult: (result) => {
              if (result.sentAtMs < spec.preMs) return;
              result.sentAtMs -= spec.preMs;
              batch.push(result);
            },
          });
          flusher = setInterval(flush, BATCH_MS);
          load.done.then(() => {
            clearInterval(flusher);
            flush();
            send({ type: 'load-done' });
          });
        },
        Math.max(0, startAtMs - Date.now()),
      );
    },
    async close() {
      clearInterval(flusher);
      load?.stop();
      await load?.close();
    },
  };
}
let role: ServiceSpec['role'] | undefined;

// Every service process records how late its event loop runs: a figure measured by a process whose
// timers fire late measures the machine, not the client (see `loopDelay` in the report).
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

process.on('disconnect', () => process.exit(0));

async function dispatch(method: string, params: unknown): Promise<unknown> {
  if (!service) throw new Error('service not started');
  if (method === 'loop-delay') {
    const figures = {
      p99Ms: loopDelay.count > 0 ? loopDelay.percentile(99) / 1e6 : 0,
      maxMs: loopDelay.count > 0 ? loopDelay.max / 1e6 : 0,
    };
    if (params === 'reset') loopDelay.reset();
    return figures;
  }
  if (method === 'close') {
    loopDelay.disable();
    await service.close();
    setImmediate(() => process.exit(0));
    return null;
  }
  if (role === 'load') {
    if (method === 'start') return (service as LoadService).start(params as number);
  } else if (role === 'supplier') {
    const supplier = service as SupplierService;
    if (method === 'set') return supplier.set(params as never);
    if (method === 'counts') return supplier.counts();
    if (method === 'restart') return supplier.restart();
    if (method === 'take-orders') return supplier.takeOrders();
  } else {
    const tier = service as TierService;
    if (method === 'stats') return tier.stats();
    if (method === 'measured') return tier.measured();
    if (method === 'take-call-p99') return tier.takeCallP99();
    if (method === 'take-waterfalls') return tier.takeWaterfalls();
    if (method === 'metrics') return tier.metrics();
    if (method === 'reset-measurements') return tier.resetMeasurements();
    if (method === 'configure') return tier.configure(params as never);
  }
  throw new Error(`unknown method ${method}`);
}

process.on('message', (message: ServiceSpec | ServiceRequest) => {
  if ('role' in message) {
    role = message.role;
    const starting =
      message.role === 'supplier'
        ? startSupplier(message)
        : message.role === 'load'
          ? Promise.resolve(prepareLoad(message))
          : startTier(message);
    starting.then(
      (started) => {
        service = started;
        send({ type: 'ready', port: started.port });
      },
      (error: unknown) => send({ type: 'failed', message: String(error) }),
    );
    return;
  }
  dispatch(message.method, message.params).then(
    (result) => send({ type: 'reply', id: message.id, result: result ?? null }),
    (error: unknown) => send({ type: 'reply', id: message.id, error: String(error) }),
  );
});
