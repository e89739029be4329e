/**
 * A transport for the "DNS failure of one origin" row: undici pools whose name lookup fails with
 * ENOTFOUND for every hostname, answered locally (no DNS query leaves the machine). IP literals
 * such as 127.0.0.1 are never looked up, so the healthy instance is reached as usual.
 *
 * The client has no lookup option of its own; this goes through `dependency()`'s transport seam
 * and otherwise sends exactly what the real undici transport sends.
 */
import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';
import type { Transport, TransportResponse } from '../../src/client/transport.js';

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

export function unresolvableTransport(options: {
  origins: readonly string[];
  connections: number;
  connectTimeoutMs: number;
}): Transport {
  const pools = options.origins.map(
    (origin) =>
      new Pool(origin, {
        connections: options.connections,
        connect: { timeout: options.connectTimeoutMs, lookup: failLookup },
      }),
  );
  return {
    origins: options.origins,
    request(instance, method, path, headers, body, timeoutMs, signal) {
      return pools[instance]!.request({
        method: method as 'GET',
        path,
        headers,
        body: (body ?? null) as string | null,
        signal: signal as unknown as AbortSignal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }) as unknown as Promise<TransportResponse>;
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.close()));
    },
  };
}
