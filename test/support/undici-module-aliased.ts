// With PRAZO_TEST_UNDICI_DIR, vitest.config.ts puts this module in place of
// src/transport/undici-module.ts: prazo's own client then runs on that copy of undici (`undici` is
// aliased to it), which a load through Node's module cache would not see. How prazo loads its copy
// without changing anything global is tested on the built package (test/import-globals.test.ts).
import * as undici from 'undici';

export { undici };
