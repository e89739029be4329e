/**
 * A transport for the "DNS failure of one origin" row: the client's own undici transport, with a
 * name lookup that fails with ENOTFOUND for every hostname, answered locally (no DNS query leaves
 * the machine). IP literals such as 127.0.0.1 are never looked up, so the healthy instance is
 * reached as usual. Plugged in through `dependency()`'s transport seam.
 */
import type { LookupFunction } from 'node:net';
import { createPoolTransport, type PoolTransportOptions } from '../../src/transport/pool-transport.js';
import type { Transport } from '../../src/transport/transport.js';

/** A hostname under the reserved `.test` TLD; it is never sent to a resolver. */
export const UNRESOLVABLE_HOST = 'unresolvable.prazo.test';

const failLookup: LookupFunction = (hostname, _options, callback) => {
  const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    errno: -3008,
    syscall: 'getaddrinfo',
    hostname,
  });
  process.nextTick(() => callback(error, '', 4));
};

export function unresolvableTransport(options: PoolTransportOptions): Transport {
  return createPoolTransport({ ...options, lookup: failLookup });
}
