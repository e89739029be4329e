import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const define = { __PRAZO_VERSION__: JSON.stringify(version) };

/** Library entries: one per subpath export (see package.json `exports`). */
const entry = {
  index: 'src/index.ts',
  lab: 'src/lab/index.ts',
  http: 'src/server/http.ts',
  express: 'src/server/express.ts',
  fastify: 'src/server/fastify.ts',
  prometheus: 'src/observe/prometheus.ts',
  otel: 'src/observe/otel.ts',
  policy: 'src/policy/index.ts',
  latency: 'src/latency/index.ts',
  wire: 'src/wire/index.ts',
  fleet: 'src/fleet/index.ts',
};

// No source maps: the bundles are unminified ESM/CJS with the source's names, so a stack trace through
// them reads as is, and the maps would be most of the package's size.
export default defineConfig([
  {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: true,
    treeshake: true,
    define,
  },
  {
    entry: { cli: 'src/cli/main.ts', 'drill-service': 'src/lab/drill/services/main.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    // Optional at run time (prom-client; the drill's peers cockatiel and opossum) or only used from a
    // source checkout (esbuild): never bundled.
    external: ['prom-client', 'esbuild', 'playwright-core', 'cockatiel', 'opossum'],
    define,
  },
]);
