/**
 * Which `http.request` / `https.request` calls prazo governs: the origin a call's arguments name,
 * read the way Node reads them, matched against the dependencies' origins — and, for a governed
 * origin, whether the request is one prazo can carry. Pure: no I/O, nothing is changed.
 */

/** The protocol of the module a call came through (`node:http` or `node:https`). */
export type ModuleProtocol = 'http:' | 'https:';

/** Why a request to a governed origin is passed through untouched (see docs/interceptor.md). */
export type PassReason =
  | 'socket-path'
  | 'create-connection'
  | 'lookup'
  | 'tls-options'
  | 'header'
  | 'method'
  | 'headers-list';

/** The dependencies' origins, keyed the way {@link routeOf} reads a call. */
export interface OriginTable {
  /** Lowercase host names of governed origins (IPv6 without brackets): the one check an ungoverned call pays. */
  readonly hosts: ReadonlySet<string>;
  /** `protocol//host:port` (port always written) → the origin as the dependency names it. */
  readonly origins: ReadonlyMap<string, GovernedOrigin>;
}

/** One governed origin, read once. */
export interface GovernedOrigin {
  /** As the dependency names it (`http://host:port`): what the interceptor looks up. */
  readonly origin: string;
  /** Its host name (IPv6 without brackets). */
  readonly hostname: string;
  /** Its `host[:port]`, as a `Host` header carries it. */
  readonly host: string;
  readonly port: number;
}

/** Builds the table from normalised origins (`http://host:port`, as `dependency().origins()` gives them). */
export function originTable(origins: Iterable<string>): OriginTable {
  const hosts = new Set<string>();
  const table = new Map<string, GovernedOrigin>();
  for (const origin of origins) {
    const url = new URL(origin);
    const hostname = bare(url.hostname);
    const port = url.port || defaultPort(url.protocol);
    hosts.add(hostname);
    table.set(keyOf(url.protocol, hostname, port), { origin, hostname, host: url.host, port: Number(port) });
  }
  return { hosts, origins: table };
}

/** A governed call: where it goes and what prazo sends. */
export interface GovernedTarget {
  readonly origin: GovernedOrigin;
  readonly method: string;
  readonly path: string;
  /** The caller's headers as given (a record), or null. */
  readonly headers: Record<string, unknown> | null;
  /** `user:password` to send as Basic authorization, when the call carries it. */
  readonly auth: string | null;
  readonly callback: ((response: unknown) => void) | undefined;
  /** The options' `timeout` (ms), as `request.setTimeout()` takes it, or undefined. */
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * The route of one call: `undefined` when its origin is not governed (the call goes to Node as it
 * is), a {@link PassReason} when it is governed but asks for something prazo does not carry (it goes
 * to Node as it is too), or the {@link GovernedTarget}.
 *
 * Reads `(url[, options][, callback])` or `(options[, callback])` as Node's `ClientRequest` does:
 * the options' fields over the URL's; `hostname` before `host`; the port, else the `defaultPort`,
 * else the agent's, else the protocol's. Never throws: what Node would reject passes through, and
 * Node rejects it.
 */
export function routeOf(
  table: OriginTable,
  moduleProtocol: ModuleProtocol,
  input: unknown,
  second: unknown,
  third: unknown,
): GovernedTarget | PassReason | undefined {
  let url: URL | undefined;
  let options: Record<string, unknown> | undefined;
  let callback: unknown;
  if (typeof input === 'string') {
    // One look for a governed host in the text before parsing it: an ungoverned call pays no parse
    // (unless options follow, whose host would win over the URL's).
    let named = typeof second === 'object' && second !== null;
    if (!named) {
      const lower = input.toLowerCase();
      for (const host of table.hosts)
        if (lower.includes(host)) {
          named = true;
          break;
        }
    }
    if (!named || !URL.canParse(input)) return undefined;
    url = new URL(input);
  } else if (input instanceof URL) {
    url = input;
  }
  if (url === undefined) {
    if (typeof input !== 'object' || input === null) return undefined;
    options = input as Record<string, unknown>;
    callback = second;
  } else if (typeof second === 'function') {
    callback = second;
  } else {
    if (typeof second === 'object' && second !== null) options = second as Record<string, unknown>;
    callback = third;
  }

  const rawHost = options?.hostname ?? url?.hostname ?? options?.host ?? 'localhost';
  if (typeof rawHost !== 'string') return undefined;
  let host = rawHost;
  if (!table.hosts.has(host)) {
    host = bare(rawHost.toLowerCase());
    if (!table.hosts.has(host)) return undefined;
  }
  const agent = options?.agent as { protocol?: unknown; defaultPort?: unknown } | undefined | false;
  const expected = (agent && typeof agent.protocol === 'string' && agent.protocol) || moduleProtocol;
  const protocol = options?.protocol || url?.protocol || expected;
  // Node refuses a protocol its module (or agent) does not speak: let it.
  if (protocol !== expected) return undefined;
  const rawPort: unknown =
    options?.port ||
    url?.port ||
    options?.defaultPort ||
    (agent || undefined)?.defaultPort ||
    defaultPort(protocol);
  // Only a port Node itself would read as one: anything else (an object whose `toString` throws or
  // is not a function) is not prazo's to route — Node's own function answers it.
  if (typeof rawPort !== 'string' && typeof rawPort !== 'number') return undefined;
  const port = String(rawPort);
  const origin = table.origins.get(keyOf(protocol, host, port));
  if (origin === undefined) return undefined;

  // Governed origin: what the request asks for decides whether prazo can carry it.
  if (options !== undefined) {
    if (options.socketPath != null) return 'socket-path';
    if (options.createConnection != null) return 'create-connection';
    if (options.lookup != null) return 'lookup';
    if (
      protocol === 'https:' &&
      (hasTls(options) || (agent && hasTls((agent as { options?: unknown }).options)))
    )
      return 'tls-options';
  }
  const rawMethod = options?.method ?? 'GET';
  let path = options?.path as string | null | undefined;
  // Node validates these and throws: let it.
  if (typeof rawMethod !== 'string' || (path != null && typeof path !== 'string')) return undefined;
  const method = rawMethod.toUpperCase();
  if (method === 'CONNECT') return 'method';
  const headers = options?.headers;
  if (headers != null) {
    if (typeof headers !== 'object' || Array.isArray(headers)) return 'headers-list';
    for (const name in headers as Record<string, unknown>)
      if (
        UNCARRIED.has(name.toLowerCase()) &&
        !carriedConnection(name, (headers as Record<string, unknown>)[name])
      )
        return 'header';
  }
  if (path == null) path = url === undefined ? '/' : url.pathname + url.search;
  let auth = options?.auth;
  if (auth == null && url !== undefined && (url.username !== '' || url.password !== ''))
    auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  const timeout = options?.timeout;
  const signal = options?.signal;
  return {
    origin,
    method,
    path,
    headers: (headers as Record<string, unknown> | null | undefined) ?? null,
    auth: typeof auth === 'string' ? auth : null,
    callback: typeof callback === 'function' ? (callback as (response: unknown) => void) : undefined,
    timeoutMs: typeof timeout === 'number' && timeout > 0 ? timeout : undefined,
    signal: signal instanceof AbortSignal ? signal : undefined,
  };
}

/**
 * Headers undici refuses on a request, or that ask for what only Node's own request does (a
 * `100 Continue` wait, an upgrade, a body streamed chunk by chunk): such a request passes through.
 * `connection: keep-alive` and `connection: close` are carried.
 */
const UNCARRIED = new Set(['expect', 'upgrade', 'connection', 'keep-alive', 'transfer-encoding']);

function carriedConnection(name: string, value: unknown): boolean {
  if (name.toLowerCase() !== 'connection' || typeof value !== 'string') return false;
  const lower = value.trim().toLowerCase();
  return lower === 'keep-alive' || lower === 'close';
}

/** TLS options a request (or its agent) sets, which the dependency's transport does not take. */
const TLS_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'servername',
  'checkServerIdentity',
  'secureContext',
  'ciphers',
  'minVersion',
  'maxVersion',
  'secureOptions',
  'ALPNProtocols',
] as const;

function hasTls(options: unknown): boolean {
  if (typeof options !== 'object' || options === null) return false;
  const o = options as Record<string, unknown>;
  if (o.rejectUnauthorized === false) return true;
  for (const name of TLS_OPTIONS) if (o[name] != null) return true;
  return false;
}

function keyOf(protocol: string, host: string, port: string): string {
  return `${protocol}//${host}:${port}`;
}

function defaultPort(protocol: string): string {
  return protocol === 'https:' ? '443' : '80';
}

/** A host name without IPv6 brackets. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
