/**
 * Entry of a drill service process (forked by the drill; not for direct use). The first IPC message
 * is the service's spec; the process answers `ready` with its port, then serves RPC requests until
 * `close` — or exits on its own when the drill goes away (the IPC channel closes).
 */
import type { ServiceMessage, ServiceRequest, ServiceSpec } from './service-spec.js';
import { type SupplierService, startSupplier } from './supplier-service.js';
import { startTier, type TierService } from './tier-service.js';

const send = (message: ServiceMessage): void => {
  if (process.connected) process.send?.(message);
};

let service: SupplierService | TierService | undefined;
let role: ServiceSpec['role'] | undefined;

process.on('disconnect', () => process.exit(0));

async function dispatch(method: string, params: unknown): Promise<unknown> {
  if (!service) throw new Error('service not started');
  if (method === 'close') {
    await service.close();
    setImmediate(() => process.exit(0));
    return null;
  }
  if (role === 'supplier') {
    const supplier = service as SupplierService;
    if (method === 'set') return supplier.set(params as never);
    if (method === 'counts') return supplier.counts();
    if (method === 'restart') return supplier.restart();
  } else {
    const tier = service as TierService;
    if (method === 'stats') return tier.stats();
    if (method === 'measured') return tier.measured();
    if (method === 'configure') return tier.configure(params as never);
  }
  throw new Error(`unknown method ${method}`);
}

process.on('message', (message: ServiceSpec | ServiceRequest) => {
  if ('role' in message) {
    role = message.role;
    const starting = message.role === 'supplier' ? startSupplier(message) : startTier(message);
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
