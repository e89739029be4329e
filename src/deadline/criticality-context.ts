import { AsyncLocalStorage } from 'node:async_hooks';
import { CRITICALITY_HEADER, type Criticality } from '../wire/criticality-header.js';

// Private, like the deadline's store: the only ways in are withCriticality() and the server adapters.
const storage = new AsyncLocalStorage<Criticality>();

/**
 * Runs `fn` with an ambient criticality: prazo's client sends it as `x-criticality` on every call
 * made inside (unless the call sets that header itself). The server adapters enter it for each request
 * that carries a criticality other than `default`, so it travels down the chain like the deadline.
 * A nested scope replaces the outer value (a handler may mark its background calls `sheddable`).
 * @returns What `fn` returns.
 * @example withCriticality('sheddable', () => refreshRecommendations());
 */
export function withCriticality<T>(criticality: Criticality, fn: () => T): T {
  return storage.run(criticality, fn);
}

/** The ambient criticality set by the nearest {@link withCriticality} or server adapter, if any. */
export function currentCriticality(): Criticality | undefined {
  return storage.getStore();
}

/**
 * The caller's flat header pairs with the ambient criticality added, unless there is none, it is
 * `default` (what no header means anyway) or the caller set `x-criticality` itself.
 * @internal Used by the client when it builds a call.
 */
export function withAmbientCriticality(pairs: string[] | null): string[] | null {
  const ambient = storage.getStore();
  if (ambient === undefined || ambient === 'default') return pairs;
  if (pairs === null) return [CRITICALITY_HEADER, ambient];
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i]!.toLowerCase() === CRITICALITY_HEADER) return pairs;
  pairs.push(CRITICALITY_HEADER, ambient);
  return pairs;
}

/**
 * Runs `fn` under `criticality` when it says something (`critical` or `sheddable`); a `default`
 * request runs as is, so that it costs nothing.
 * @internal Used by the server adapters.
 */
export function withRequestCriticality<T>(criticality: Criticality, fn: () => T): T {
  return criticality === 'default' ? fn() : storage.run(criticality, fn);
}
