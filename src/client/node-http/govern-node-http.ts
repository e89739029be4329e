import type * as Http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { InvalidOptionError } from '../../errors.js';
import { type GovernedDispatcher, GovernedRequest } from './governed-request.js';
import { http, https } from './node-modules.js';
import { type ModuleProtocol, type OriginTable, originTable, routeOf } from './route.js';

/** `http.request`'s shape: `(url[, options][, callback])` or `(options[, callback])`. */
export type NodeRequestFunction = (
  input: unknown,
  options?: unknown,
  callback?: unknown,
) => Http.ClientRequest;
type RequestFunction = NodeRequestFunction;

/**
 * Routes the calls of `node:http` and `node:https` (`request` and `get`, and so axios, got,
 * node-fetch 2, superagent, the AWS SDK's node handler …) to a governed origin through `dispatcher`
 * — the one `install()` composed prazo's interceptor onto — as one prazo call each; every other
 * call, and a governed one that asks for what prazo does not carry (see {@link routeOf}), goes to
 * Node's own function as it is.
 *
 * Replaces the four functions on the modules (and the ESM bindings of `node:http`/`node:https`,
 * through `syncBuiltinESMExports()`); the returned function puts Node's back where prazo's are still
 * in place, and turns prazo's into plain forwarding where something has since wrapped them.
 *
 * @param origins the governed origins, normalised (`http://host:port`).
 * @returns the undo.
 */
export function governNodeHttp(origins: Iterable<string>, dispatcher: GovernedDispatcher): () => void {
  const table = originTable(origins);
  const state = { active: true };
  const patches = [
    patch(http, 'request', 'http:', false),
    patch(http, 'get', 'http:', true),
    patch(https, 'request', 'https:', false),
    patch(https, 'get', 'https:', true),
  ];
  syncBuiltinESMExports();
  return () => {
    if (!state.active) return;
    state.active = false;
    for (const undo of patches) undo();
    syncBuiltinESMExports();
  };

  function patch(
    module: typeof http | typeof https,
    name: 'request' | 'get',
    protocol: ModuleProtocol,
    ends: boolean,
  ): () => void {
    const target = module as unknown as Record<'request' | 'get', RequestFunction>;
    const original = target[name];
    const governed = governedFunction(original, protocol, ends, table, dispatcher, state);
    target[name] = governed;
    return () => {
      if (target[name] === governed) target[name] = original;
    };
  }
}

function governedFunction(
  original: RequestFunction,
  protocol: ModuleProtocol,
  ends: boolean,
  table: OriginTable,
  dispatcher: GovernedDispatcher,
  state: { active: boolean },
): RequestFunction {
  return function request(input, options, callback) {
    if (state.active) {
      const route = routeOf(table, protocol, input, options, callback);
      if (typeof route === 'object') {
        const governed = new GovernedRequest(route, protocol, dispatcher);
        if (ends) governed.end();
        return governed as unknown as Http.ClientRequest;
      }
    }
    return original(input, options, callback);
  };
}

/**
 * An `http.request`-shaped function for a client that takes one — got's `request` option, axios's
 * `transport` — governing that client alone, with nothing global replaced: a call to one of the
 * interceptor's origins runs as a prazo call on `dispatcher`, which must be a dispatcher the
 * interceptor is composed onto; any other call goes to Node's `http.request` or `https.request`
 * (by the call's protocol) untouched. The same layer as `install({ nodeHttp: true })`, with its
 * pass-through cases (docs/interceptor.md).
 *
 * @throws {InvalidOptionError} (`dispatcher`) without a `dispatch()` function.
 * @example
 * const prazo = prazoInterceptor({ dependencies: [inventoryOptions] });
 * const request = nodeHttpRequest(prazo, new Agent().compose(prazo));
 * await got('http://10.0.0.7:8080/stock/42', { request, retry: { limit: 0 } });
 * await axios.get('http://10.0.0.7:8080/stock/42', { transport: { request } });
 */
export function nodeHttpRequest(
  interceptor: { readonly dependencies: ReadonlyMap<string, { origins(): readonly string[] }> },
  dispatcher: GovernedDispatcher,
): NodeRequestFunction {
  if (typeof (dispatcher as Partial<GovernedDispatcher> | null)?.dispatch !== 'function')
    throw new InvalidOptionError('dispatcher', 'a dispatcher the interceptor is composed onto', dispatcher);
  const table = originTable(Array.from(interceptor.dependencies.values(), (dep) => dep.origins()).flat());
  return function request(input, options, callback) {
    const protocol = protocolOf(input, options);
    const route = routeOf(table, protocol, input, options, callback);
    if (typeof route === 'object')
      return new GovernedRequest(route, protocol, dispatcher) as unknown as Http.ClientRequest;
    return (protocol === 'https:' ? https.request : http.request)(
      input as never,
      options as never,
      callback as never,
    );
  };
}

/** The protocol a call names (options over URL), `http:` when it names none. */
function protocolOf(input: unknown, options: unknown): ModuleProtocol {
  const fromOptions = (o: unknown) =>
    typeof o === 'object' && o !== null && !(o instanceof URL)
      ? (o as { protocol?: unknown }).protocol
      : undefined;
  const named =
    fromOptions(options) ??
    fromOptions(input) ??
    (input instanceof URL
      ? input.protocol
      : typeof input === 'string'
        ? input.slice(0, input.indexOf(':') + 1).toLowerCase()
        : undefined);
  return named === 'https:' ? 'https:' : 'http:';
}
