import { promises as dns, type RecordWithTtl } from 'node:dns';
import { InvalidOptionError, ResolverError } from '../errors.js';
import { integerIn, positiveMs } from '../option-checks.js';
import type { OriginResolver, OriginsAnswer } from './origin-resolver.js';
import { ttlRefreshMs } from './refresh-delay.js';

/** Options of {@link dnsOrigins}. */
export interface DnsOriginsOptions {
  /** The name whose A/AAAA records are the instances (`inventory.internal`). */
  hostname: string;
  /** The instances' port: a DNS address record carries none. */
  port: number;
  /** @default 'http' */
  protocol?: 'http' | 'https';
  /** Which records to ask for: `4` (A), `6` (AAAA) or `'any'` (both). @default 'any' */
  family?: 4 | 6 | 'any';
  /**
   * DNS servers to ask, as `dns.setServers()` takes them (`'10.0.0.2'`, `'127.0.0.1:5353'`).
   * @default the system's servers
   */
  servers?: readonly string[];
  /** Floor of the time between two resolutions, in ms, whatever the TTL says. @default 1000 */
  minRefreshMs?: number;
  /** Ceiling of the time between two resolutions, in ms, whatever the TTL says. @default 30000 */
  maxRefreshMs?: number;
  /** Time a DNS server has to answer one query, in ms (c-ares tries twice). @default 1000 */
  queryTimeoutMs?: number;
}

/** Defaults of {@link DnsOriginsOptions}. */
export const DNS_ORIGINS_DEFAULTS = Object.freeze({
  protocol: 'http' as const,
  family: 'any' as const,
  minRefreshMs: 1_000,
  maxRefreshMs: 30_000,
  queryTimeoutMs: 1_000,
});

/**
 * A resolver of origins (for `dependency({ origins })`) that asks DNS for the A and/or AAAA records
 * of `hostname` through `node:dns` (not `getaddrinfo`, so the TTL is known) and answers
 * `http://<address>:<port>` for each; the next resolution comes after the smallest TTL, held between
 * `minRefreshMs` and `maxRefreshMs`. A name with no address, or a server that fails or does not
 * answer, rejects with `RESOLVER_FAILED`: the dependency keeps its last good set.
 *
 * @throws {InvalidOptionError} naming the first unusable option.
 * @example
 * const inventory = dependency({
 *   name: 'inventory',
 *   origins: dnsOrigins({ hostname: 'inventory.internal', port: 8080 }),
 *   latency: { p99Ms: 180 },
 *   userDeadlineMs: 1500,
 * });
 */
export function dnsOrigins(options: DnsOriginsOptions): OriginResolver {
  const o = normalizeDnsOriginsOptions(options);
  const resolver = new dns.Resolver({ timeout: o.queryTimeoutMs, tries: 2 });
  if (o.servers !== undefined) {
    try {
      resolver.setServers([...o.servers]);
    } catch (error) {
      throw new InvalidOptionError('servers', `DNS server addresses (${String(error)})`, o.servers);
    }
  }
  const ask = async (family: 4 | 6): Promise<RecordWithTtl[]> => {
    try {
      return family === 4
        ? await resolver.resolve4(o.hostname, { ttl: true })
        : await resolver.resolve6(o.hostname, { ttl: true });
    } catch (error) {
      // The name exists but has no record of this family: not a failure when asking for both.
      if (o.family === 'any' && (error as { code?: string }).code === dns.NODATA) return [];
      throw error;
    }
  };
  const resolve = async (): Promise<OriginsAnswer> => {
    let records: RecordWithTtl[];
    try {
      const families: Array<4 | 6> = o.family === 'any' ? [4, 6] : [o.family];
      records = (await Promise.all(families.map(ask))).flat();
    } catch (error) {
      throw new ResolverError(`DNS resolution of ${o.hostname} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (records.length === 0) throw new ResolverError(`DNS has no address for ${o.hostname}.`);
    let ttl = Number.POSITIVE_INFINITY;
    const origins: string[] = [];
    for (const record of records) {
      ttl = Math.min(ttl, record.ttl);
      const host = record.address.includes(':') ? `[${record.address}]` : record.address;
      origins.push(`${o.protocol}://${host}:${o.port}`);
    }
    return { origins, refreshMs: ttlRefreshMs(ttl, o.minRefreshMs, o.maxRefreshMs) };
  };
  return Object.assign(resolve, { cancel: () => resolver.cancel() });
}

/**
 * Validates {@link DnsOriginsOptions} and applies {@link DNS_ORIGINS_DEFAULTS}.
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeDnsOriginsOptions(
  options: DnsOriginsOptions,
): Required<Omit<DnsOriginsOptions, 'servers'>> & { servers: readonly string[] | undefined } {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object', options);
  const { hostname, port, servers } = options;
  if (typeof hostname !== 'string' || hostname.trim() === '' || /[\s/:]/.test(hostname))
    throw new InvalidOptionError('hostname', 'a host name such as "inventory.internal"', hostname);
  integerIn('port', port, 1, 65_535);
  const protocol = options.protocol ?? DNS_ORIGINS_DEFAULTS.protocol;
  if (protocol !== 'http' && protocol !== 'https')
    throw new InvalidOptionError('protocol', "'http' or 'https'", protocol);
  const family = options.family ?? DNS_ORIGINS_DEFAULTS.family;
  if (family !== 4 && family !== 6 && family !== 'any')
    throw new InvalidOptionError('family', "4, 6 or 'any'", family);
  if (servers !== undefined && (!Array.isArray(servers) || servers.some((s) => typeof s !== 'string')))
    throw new InvalidOptionError('servers', 'an array of DNS server addresses', servers);
  const minRefreshMs = positiveMs('minRefreshMs', options.minRefreshMs ?? DNS_ORIGINS_DEFAULTS.minRefreshMs);
  const maxRefreshMs = positiveMs('maxRefreshMs', options.maxRefreshMs ?? DNS_ORIGINS_DEFAULTS.maxRefreshMs);
  if (maxRefreshMs < minRefreshMs)
    throw new InvalidOptionError(
      'maxRefreshMs',
      `a number of ms ≥ minRefreshMs (${minRefreshMs})`,
      maxRefreshMs,
    );
  const queryTimeoutMs = positiveMs(
    'queryTimeoutMs',
    options.queryTimeoutMs ?? DNS_ORIGINS_DEFAULTS.queryTimeoutMs,
  );
  return { hostname, port, protocol, family, servers, minRefreshMs, maxRefreshMs, queryTimeoutMs };
}
