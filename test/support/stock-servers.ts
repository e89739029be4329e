import type { DependencyOptions } from '../../src/client/options.js';
import { reply, startServer, type TestServer } from './servers.js';

/** Servers for the interceptor's and install()'s tests; `closeAll()` closes every one started. */
export function stockServers() {
  const servers: TestServer[] = [];
  const keep = (server: TestServer): TestServer => {
    servers.push(server);
    return server;
  };
  return {
    /** Answers 503 to its first request, then 200 with `{"stock":7}`. */
    flaky: async () =>
      keep(
        await startServer((_req, res, n) =>
          n === 1 ? reply(res, 503) : reply(res, 200, { 'content-type': 'application/json' }, '{"stock":7}'),
        ),
      ),
    /** Never answers. */
    hanging: async () => keep(await startServer(() => {})),
    closeAll: () => Promise.all(servers.splice(0).map((s) => s.close())),
  };
}

/** A dependency named inventory on `origin`: p99 300 ms, 1.5 s for a call. */
export const stockOptions = (origin: string, extra: Partial<DependencyOptions> = {}): DependencyOptions => ({
  name: 'inventory',
  origins: [origin],
  latency: { p99Ms: 300 },
  userDeadlineMs: 1_500,
  ...extra,
});
