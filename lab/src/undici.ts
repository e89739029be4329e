import * as undici from 'undici';

/**
 * undici, for the lab's own clients (the load drivers, the naive and peer callers, the overload
 * runs). The lab's dependency, the same version as prazo's and deduplicated onto it by npm, so the
 * classes are prazo's too. Its first load sets the global dispatcher of the process: only the
 * modules of the drill and of `@prazo/lab/overload` import this one, never the lab's main entry.
 */
export { undici };
