import type { Agent } from 'undici';
import { InvalidOptionError } from '../errors.js';
import { DISPATCHER_SLOTS } from '../transport/dispatcher-slots.js';
import { undici } from '../transport/undici-module.js';
import { type PrazoInterceptor, type PrazoInterceptorOptions, prazoInterceptor } from './interceptor.js';
import { governNodeHttp } from './node-http/govern-node-http.js';
import type { GovernedDispatcher } from './node-http/governed-request.js';

/** Options of {@link install}. */
export interface InstallOptions extends PrazoInterceptorOptions {
  /**
   * The dispatcher prazo's interceptor is composed onto (its pools carry every request, governed or
   * not). Pass your undici's `new Agent({ … })` to choose its version and options.
   * @default the global dispatcher in place, or an undici `Agent` when there is none
   */
  dispatcher?: ComposableDispatcher;
  /**
   * Also govern `node:http` and `node:https` (`request`, `get`): axios with its default adapter, got,
   * node-fetch 2, superagent, the AWS SDK's node handler. A call to a dependency's origin runs as a
   * prazo call on the installed dispatcher; any other call goes to Node's own function as it is.
   * `uninstall()` puts Node's functions back. See docs/interceptor.md for what passes through.
   * @default false
   */
  nodeHttp?: boolean;
}

/** What `install()` needs of a dispatcher: undici's `compose()` (undici 6.x and later). */
export interface ComposableDispatcher {
  compose(interceptor: PrazoInterceptor): object;
}

interface Installed {
  /** The Agent install() created because there was no dispatcher to compose onto, or null. */
  readonly owned: Agent | null;
  readonly previous: readonly unknown[];
  readonly installed: object;
  readonly interceptor: PrazoInterceptor;
  /** Puts Node's `http`/`https` functions back, when `nodeHttp` governed them. */
  readonly restoreNodeHttp: (() => void) | null;
}

let current: Installed | null = null;

/**
 * Makes prazo the global dispatcher: Node's built-in `fetch`, `undici.request` and the SDKs built on
 * them go through {@link prazoInterceptor} — the dependencies' origins with their whole policy, every
 * other origin untouched; with `nodeHttp: true`, `node:http` and `node:https` clients (axios, got,
 * the AWS SDK …) too. Calling it again replaces the previous installation (one layer, never two);
 * {@link uninstall} restores the dispatcher that was in place.
 *
 * @returns the interceptor, with its dependencies (events, policy, budget).
 * @throws {InvalidOptionError} for unusable dependency options or a dispatcher without `compose()`.
 * @example
 * install({ dependencies: [{ name: 'inventory', origins: ['http://10.0.0.7:8080'], latency: { p99Ms: 180 }, userDeadlineMs: 1500 }] });
 * const res = await fetch('http://10.0.0.7:8080/stock/42'); // deadline, retries, budget, hedging
 */
export function install(options: InstallOptions): PrazoInterceptor {
  const nodeHttp = (options as Partial<InstallOptions> | undefined)?.nodeHttp;
  if (nodeHttp !== undefined && typeof nodeHttp !== 'boolean')
    throw new InvalidOptionError('nodeHttp', 'a boolean', nodeHttp);
  const interceptor = prazoInterceptor(options);
  if (current !== null) void uninstall();
  const slots = globalThis as unknown as Record<symbol, unknown>;
  const previous = DISPATCHER_SLOTS.map((slot) => slots[slot]);
  const found = options.dispatcher ?? previous[1] ?? previous[0];
  const owned = found === undefined ? new undici.Agent() : null;
  const base = found ?? owned;
  if (typeof (base as Partial<ComposableDispatcher>).compose !== 'function') {
    void interceptor.close();
    throw new InvalidOptionError(
      'dispatcher',
      'an undici dispatcher with compose() (undici 6 or later)',
      base,
    );
  }
  const installed = (base as ComposableDispatcher).compose(interceptor);
  DISPATCHER_SLOTS.forEach((slot, i) => {
    // undici defines the slots non-configurable but writable; define one the same way if absent.
    if (i === 0 || previous[i] !== undefined) setSlot(slot, installed);
  });
  const restoreNodeHttp =
    nodeHttp === true
      ? governNodeHttp(
          Array.from(interceptor.dependencies.values(), (dep) => dep.origins()).flat(),
          installed as GovernedDispatcher,
        )
      : null;
  current = { owned, previous, installed, interceptor, restoreNodeHttp };
  return interceptor;
}

/**
 * Restores the global dispatcher that was in place before {@link install} (where prazo's is still
 * the one installed), releases the interceptor's timers and closes the `Agent` install() created, if
 * it created one. Does nothing when prazo is not
 * installed; resolves once the governed calls in flight have been cancelled.
 */
export function uninstall(): Promise<void> {
  const installed = current;
  if (installed === null) return Promise.resolve();
  current = null;
  installed.restoreNodeHttp?.();
  const slots = globalThis as unknown as Record<symbol, unknown>;
  DISPATCHER_SLOTS.forEach((slot, i) => {
    if (slots[slot] === installed.installed) setSlot(slot, installed.previous[i]);
  });
  const closed = installed.interceptor.close();
  return installed.owned === null ? closed : closed.then(() => installed.owned!.close());
}

function setSlot(slot: symbol, value: unknown): void {
  if (Object.hasOwn(globalThis, slot)) (globalThis as unknown as Record<symbol, unknown>)[slot] = value;
  else
    Object.defineProperty(globalThis, slot, {
      value,
      writable: true,
      enumerable: false,
      configurable: false,
    });
}
