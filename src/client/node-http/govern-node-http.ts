import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { type GovernedDispatcher, GovernedRequest } from './governed-request.js';
import { type ModuleProtocol, type OriginTable, originTable, routeOf } from './route.js';

type RequestFunction = (input: unknown, options?: unknown, callback?: unknown) => http.ClientRequest;

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
        return governed as unknown as http.ClientRequest;
      }
    }
    return original(input, options, callback);
  };
}
