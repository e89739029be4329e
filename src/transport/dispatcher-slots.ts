/**
 * The global slots undici keeps its global dispatcher in: Node's built-in `fetch`, `undici.request`
 * and every copy of undici in the process read them. undici 7 writes both with one dispatcher;
 * undici 8 reads `.2` and keeps `.1` for older copies (Node's bundled `fetch` before undici 8).
 */
export const DISPATCHER_SLOTS = [
  Symbol.for('undici.globalDispatcher.1'),
  Symbol.for('undici.globalDispatcher.2'),
] as const;
