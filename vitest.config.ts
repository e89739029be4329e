import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// PRAZO_TEST_UNDICI_DIR=<dir with node_modules/undici> runs the suites against that copy of undici
// instead of prazo's own (CI: undici 8 on the newer Node lines). prazo loads its copy through Node's
// module cache (src/transport/undici-module.ts), which an alias does not reach: that module is
// replaced by one that imports the aliased `undici`.
const undiciDir = process.env.PRAZO_TEST_UNDICI_DIR;
const undiciModule = fileURLToPath(new URL('./test/support/undici-module-aliased.ts', import.meta.url));

export default defineConfig({
  ...(undiciDir
    ? {
        resolve: {
          alias: [
            { find: /^undici$/, replacement: `${undiciDir}/node_modules/undici/index.js` },
            { find: /^(?:\.\.?\/)+(?:transport\/)?undici-module\.js$/, replacement: undiciModule },
          ],
        },
      }
    : {}),
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests start real servers; a 2-core machine is happier with few workers.
    maxWorkers: 2,
  },
});
