import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { LIBRARY_ENTRIES } from './scripts/library-entries.js';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const define = { __PRAZO_VERSION__: JSON.stringify(version) };

// No source maps: the bundles are unminified ESM/CJS with the source's names, so a stack trace through
// them reads as is, and the maps would be most of the package's size.
export default defineConfig([
  {
    // One per subpath export of package.json (scripts/library-entries.ts).
    entry: LIBRARY_ENTRIES,
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
    // The library's own CLI (calibrate, pool). The drill, the simulator and the double are the lab's
    // (lab/, a workspace of its own, built by lab/tsup.config.ts).
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    // Optional at run time (prom-client, `prazo calibrate --prometheus`): never bundled.
    external: ['prom-client'],
    // @prazo/cli-kit (packages/cli-kit, private) is bundled: it is in no dependency list of
    // package.json, so tsup does not leave it external, and the package never names it. The kit uses
    // the library through `prazo`, which here is the library's own sources (one copy of its errors).
    esbuildOptions(options) {
      options.alias = { ...options.alias, prazo: './src/index.ts' };
    },
    define,
  },
]);
