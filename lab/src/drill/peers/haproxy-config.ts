import type { PeerSettings } from './settings.js';

/** What the generated HAProxy configuration needs. */
export interface HaproxyConfigInput extends Pick<PeerSettings, 'connectMs' | 'readMs' | 'attempts'> {
  /** Port HAProxy listens on, on 127.0.0.1. */
  port: number;
  /** The supplier instances, `http://127.0.0.N:PORT` each (127.0.0.1, 127.0.0.2 …). */
  servers: readonly string[];
  /** Path of the health check (a real request of the route, so a slow instance fails it). */
  checkPath: string;
}

/** Health-check cadence: HAProxy's documented defaults made explicit (`inter 2s`, `fall 3`, `rise 2`). */
export const HAPROXY_CHECK = Object.freeze({ interMs: 2000, fall: 3, rise: 2, errorLimit: 10 });

/**
 * The HAProxy sidecar's configuration, set up as HAProxy's own documentation recommends for retries
 * and passive health: `timeout connect` and `timeout server` at the calibrated per-attempt values,
 * `retries` with `retry-on all-retryable-errors` (layer-7 retries: connection failures, empty and junk
 * responses, response timeouts, 500/502/503/504), `option redispatch 1` (every retry goes to another
 * server), active HTTP checks, and `observe layer7` with `on-error mark-down`, which takes a server
 * out of rotation after `error-limit` consecutive bad answers seen on live traffic.
 *
 * @see https://www.haproxy.com/documentation/haproxy-configuration-tutorials/service-reliability/retries/
 * @see https://www.haproxy.com/blog/haproxy-layer-7-retries-and-chaos-engineering/
 * @see https://docs.haproxy.org/2.6/configuration.html#5.2-observe (observe, error-limit, on-error)
 */
export function haproxyConfig(input: HaproxyConfigInput): string {
  const lines = [
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    `  timeout connect ${input.connectMs}ms`,
    '  timeout client 30s',
    `  timeout server ${input.readMs}ms`,
    `  timeout check ${input.readMs}ms`,
    `  retries ${input.attempts - 1}`,
    '  retry-on all-retryable-errors',
    '  option redispatch 1',
    '',
    'frontend shop_to_supplier',
    `  bind 127.0.0.1:${input.port}`,
    '  default_backend supplier',
    '',
    'backend supplier',
    '  balance roundrobin',
    `  option httpchk GET ${input.checkPath}`,
    '  http-check expect status 200',
    `  default-server inter ${HAPROXY_CHECK.interMs}ms fall ${HAPROXY_CHECK.fall} rise ${HAPROXY_CHECK.rise} observe layer7 error-limit ${HAPROXY_CHECK.errorLimit} on-error mark-down`,
    ...input.servers.map((server, i) => `  server supplier-${i} ${new URL(server).host} check`),
    '',
  ];
  return lines.join('\n');
}
