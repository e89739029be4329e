/**
 * Runs every benchmark in `bench/`, one after the other, each in its own process (so that one's JIT
 * state and garbage do not reach the next), with its default options. `npm run bench` builds the
 * package first; extra arguments name the benchmarks to run (`npm run bench -- client histogram`).
 *
 *   npm run bench [-- <name> …]
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const all = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .map((file) => file.slice(0, -'.bench.ts'.length))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Known: ${all.join(', ')}.`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  console.log(`\n## ${name}\n`);
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', `${dir}${name}.bench.ts`], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed++;
    console.error(`${name}: exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
