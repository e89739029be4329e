import type * as Http from 'node:http';

/**
 * `node:http`'s `createServer`, taken from Node's built-in modules rather than by an `import`: on
 * Node 22 and later, an ES module that imports `node:http` loads Node's bundled undici (the module's
 * namespace reads its lazy `WebSocket` exports), and that load sets the process's global
 * dispatcher — importing `@prazo/lab` must change nothing global.
 */
export const createServer: typeof Http.createServer = (process.getBuiltinModule('node:http') as typeof Http)
  .createServer;
