import { defineConfig } from 'tsup';

// The lab's command (`prazo drill | simulate | double`, and the library's own commands through it)
// and the drill's service process. prazo itself stays an import: at run time `prazo` resolves through
// the workspace link to the library's build (dist/ at the repository's root, which `npm start` builds
// first), so the drill measures the library as it ships.
export default defineConfig({
  entry: { cli: 'src/cli/main.ts', 'drill-service': 'src/drill/services/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  clean: true,
  banner: { js: '#!/usr/bin/env node' },
  // The library, undici, and what only some runs load (the dashboard's metrics, the peers of
  // `--peers`, the browser, esbuild for a source checkout, the Redis client of the prazo column's
  // order writes): never bundled.
  external: [
    /^prazo(?:\/|$)/,
    'undici',
    'prom-client',
    'esbuild',
    'playwright-core',
    'cockatiel',
    'opossum',
    'ioredis',
  ],
  // @prazo/cli-kit (packages/cli-kit) is sources only, like the lab: bundled.
  noExternal: [/^@prazo\/cli-kit(?:\/|$)/],
});
