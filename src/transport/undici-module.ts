import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Undici from 'undici';
import { DISPATCHER_SLOTS } from './dispatcher-slots.js';

/**
 * prazo's own copy of undici, loaded without touching the process. A plain `import 'undici'` would
 * change it twice: the copy's `lib/global.js` creates an `Agent` and writes it into the global
 * dispatcher slots when it finds them empty, and its `lib/web/cookies` reads `globalThis.Headers`,
 * which loads Node's bundled undici — whose own global dispatcher check then runs too. Node's
 * built-in `fetch` would move onto prazo's copy (on Node 26, away from its bundled undici 8) the
 * moment the application imports prazo.
 *
 * So the copy is loaded here, synchronously and once, for every module of prazo that needs undici
 * at run time (`npm run imports` checks that no other module imports it for more than types). On
 * the copy's first load in the process:
 * - each empty slot holds a placeholder while the copy loads, so its `lib/global.js` finds the slots
 *   taken and creates no `Agent`; the placeholders are removed as soon as it has loaded, leaving
 *   every slot exactly as it was (absent, or `undefined`);
 * - the copy's cookie helpers (which prazo never uses) are a stub during that load, so nothing reads
 *   `globalThis.Headers` and Node's bundled undici stays unloaded until the process uses it;
 * - the three modules that reach outside the copy (its entry module, `lib/global.js` and the cookie
 *   helpers) then leave Node's module cache again: an application that shares the same files (npm
 *   dedupes its undici onto prazo's) and loads undici after prazo evaluates them afresh, and gets a
 *   global dispatcher exactly as if prazo had not loaded first. The rest of the copy stays shared,
 *   so its classes (`Agent`, `Pool`, the errors) are the application's too.
 * When the copy is already loaded (the application's own, deduped, imported before prazo), nothing
 * is evaluated and nothing is done.
 *
 * prazo itself never relies on its copy's global dispatcher: what needs one (the Prometheus reads)
 * takes the process's, or an `Agent` of its own while there is none.
 */
export const undici: typeof Undici = loadWithoutSideEffect();

function loadWithoutSideEffect(): typeof Undici {
  const load = createRequire(import.meta.url);
  const entry = load.resolve('undici');
  if (load.cache[entry] !== undefined) return load(entry) as typeof Undici;
  const lib = join(dirname(entry), 'lib');
  const cookiesFile = join(lib, 'web', 'cookies', 'index.js');
  // Only what this load evaluates leaves the cache again (a module loaded before stays as it is).
  const reaching = [entry, join(lib, 'global.js'), cookiesFile].filter(
    (file) => load.cache[file] === undefined,
  );
  if (reaching.includes(cookiesFile)) {
    const cookies = new Module(cookiesFile);
    cookies.filename = cookiesFile;
    cookies.loaded = true;
    load.cache[cookiesFile] = cookies;
  }
  const held = holdEmptySlots();
  try {
    return load(entry) as typeof Undici;
  } finally {
    held.release();
    for (const file of reaching) delete load.cache[file];
  }
}

/** Puts a placeholder in every empty dispatcher slot, until `release()` empties them again. */
function holdEmptySlots(): { release(): void } {
  const slots = globalThis as unknown as Record<symbol, unknown>;
  // Never used for a request: it only answers undici's "is a dispatcher set?" while the copy loads.
  const placeholder = Object.freeze({ dispatch: () => false });
  const held: symbol[] = [];
  for (const slot of DISPATCHER_SLOTS) {
    if (slots[slot] !== undefined) continue;
    const own = Object.getOwnPropertyDescriptor(globalThis, slot);
    if (own === undefined) {
      // A frozen globalThis refuses the placeholder, as it refuses undici's own write.
      if (!Object.isExtensible(globalThis)) continue;
      Object.defineProperty(globalThis, slot, {
        value: placeholder,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    } else if (own.writable === true) slots[slot] = placeholder;
    else continue;
    held.push(slot);
  }
  return {
    release() {
      for (const slot of held) {
        if (slots[slot] !== placeholder) continue;
        if (Object.getOwnPropertyDescriptor(globalThis, slot)?.configurable === true) delete slots[slot];
        else slots[slot] = undefined;
      }
    },
  };
}
