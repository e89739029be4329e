import type { LookupFunction } from 'node:net';
import type { buildConnector } from 'undici';
import { undici } from './undici-module.js';

/** Options of {@link createConnector}. */
export interface ConnectorOptions {
  /**
   * Connect timeout, in ms, enforced by a plain timer (to the millisecond, not undici's ~0.5 s tick):
   * a number, or a function read at each connect (the timeout in force when it starts).
   */
  timeoutMs: number | (() => number);
  /** Name lookup, as `net.connect` takes it. @default dns.lookup */
  lookup?: LookupFunction;
  /** TLS options of `https:` connections (`ca`, `cert`, `key`, `servername`, `rejectUnauthorized`). */
  tls?: object;
  /** Offer HTTP/2 through ALPN on `https:` connections. @default false */
  allowH2?: boolean;
}

/**
 * The connector of prazo's undici pools: undici's own, with the connect timeout enforced by a
 * plain `setTimeout` instead of undici's fast timers. undici's timers tick about every 500 ms, so a
 * 70 ms connect timeout fires after 0.5–1 s; and an attempt aborted while its socket is still
 * connecting is only dropped once the connect settles. Together, a black-holed instance would hold
 * a call past a sub-second deadline. Here the connect ends at `timeoutMs` with undici's
 * `UND_ERR_CONNECT_TIMEOUT`, which classifies as a connect-phase failure (nothing was sent).
 */
export function createConnector(options: ConnectorOptions): buildConnector.connector {
  const base = undici.buildConnector({
    // 0 disables undici's coarse timer: ours below replaces it.
    timeout: 0,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    ...options.tls,
    ...(options.allowH2 === true ? { allowH2: true } : {}),
  } as buildConnector.BuildOptions);
  const timeout = options.timeoutMs;
  return (connectOptions, callback) => {
    const timeoutMs = typeof timeout === 'number' ? timeout : timeout();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // undici's connector returns the socket it opens, though its type says void.
    const socket: unknown = base(connectOptions, (error, connected) => {
      clearTimeout(timer);
      if (error) callback(error, null);
      else callback(null, connected!);
    });
    if (
      typeof socket === 'object' &&
      socket !== null &&
      typeof (socket as { destroy?: unknown }).destroy === 'function'
    ) {
      timer = setTimeout(() => {
        const s = socket as unknown as { destroy(error: Error): void };
        s.destroy(
          new undici.errors.ConnectTimeoutError(
            `Connect Timeout Error (attempted address: ${connectOptions.hostname}:${connectOptions.port}, timeout: ${timeoutMs}ms)`,
          ),
        );
      }, timeoutMs);
    }
    return socket;
  };
}
