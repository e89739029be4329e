/**
 * The library's entry points: one per subpath export of package.json (`.` is `index`), each with its
 * source file. tsup builds dist/ from them; vitest and the lab resolve `prazo` and `prazo/<subpath>`
 * to the same sources (vitest.config.ts), as tsconfig.json's `paths` do for the type-check
 * (test/package-exports.test.ts checks the three agree).
 */
export const LIBRARY_ENTRIES = {
  index: 'src/index.ts',
  http: 'src/server/http.ts',
  express: 'src/server/express.ts',
  fastify: 'src/server/fastify.ts',
  prometheus: 'src/observe/prometheus.ts',
  otel: 'src/observe/otel.ts',
  policy: 'src/policy/index.ts',
  latency: 'src/latency/index.ts',
  wire: 'src/wire/index.ts',
  fleet: 'src/fleet/index.ts',
  balancer: 'src/balancer/index.ts',
} as const;

/** The specifier a program imports an entry by: `prazo`, `prazo/http`, … */
export function specifierOf(entry: string): string {
  return entry === 'index' ? 'prazo' : `prazo/${entry}`;
}
