import { defineConfig } from 'vitest/config';

// PRAZO_TEST_UNDICI_DIR=<dir with node_modules/undici> runs the suites against that copy of undici
// instead of prazo's own (CI: undici 8 on the newer Node lines).
const undiciDir = process.env.PRAZO_TEST_UNDICI_DIR;

export default defineConfig({
  ...(undiciDir
    ? { resolve: { alias: [{ find: /^undici$/, replacement: `${undiciDir}/node_modules/undici/index.js` }] } }
    : {}),
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests start real servers; a 2-core machine is happier with few workers.
    maxWorkers: 2,
  },
});
