import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const semver = require('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(v: string, r: string): boolean;
};
const read = (path: string) => JSON.parse(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8'));
const manifest = read('package.json') as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};
const lock = read('package-lock.json') as {
  packages: Record<
    string,
    { engines?: { node?: string } | string[]; hasInstallScript?: boolean; dev?: boolean }
  >;
};

describe('npm ci on the supported Node', () => {
  const oldest = semver.minVersion(manifest.engines.node)!.version;
  // The development toolchain (vite 8, rolldown) itself needs Node ≥ 20.19 to build and test.
  const developOn = ['20.19.0', process.version.slice(1)];

  const refusing = (versions: readonly string[], dev: boolean): string[] => {
    const found: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path === '' || range === undefined || (entry.dev === true && !dev)) continue;
      for (const version of versions)
        if (!semver.satisfies(version, range)) found.push(`${path} (node ${range}) on ${version}`);
    }
    return found;
  };

  it(`ships runtime dependencies that all accept Node ${oldest}`, () => {
    expect(refusing([oldest], false)).toEqual([]);
  });

  it('installs no package, dev ones included, whose engines exclude the Node 20 it is developed on (npm would warn EBADENGINE)', () => {
    expect(refusing(developOn, true)).toEqual([]);
  });

  it('says, for every package with an install script, whether it may run (no npm warning)', () => {
    const undecided: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!entry.hasInstallScript) continue;
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      if (manifest.allowScripts?.[name] === undefined) undecided.push(name);
    }
    expect(undecided).toEqual([]);
  });
});
