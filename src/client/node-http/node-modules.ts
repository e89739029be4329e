import type * as Http from 'node:http';
import type * as Https from 'node:https';

// Taken from Node's built-in modules rather than by an `import`: on Node 22 and later, an ES module
// that imports `node:http` loads Node's bundled undici (the module's namespace reads its lazy
// `WebSocket` exports), and that load sets the process's global dispatcher — importing prazo must
// change nothing global (docs/interceptor.md).

/** `node:http`, without an ES import. */
export const http = process.getBuiltinModule('node:http') as typeof Http;
/** `node:https`, without an ES import. */
export const https = process.getBuiltinModule('node:https') as typeof Https;
