import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Finds an executable (promtool, prometheus) on PATH or at `fallback`.
 *
 * When it is missing: in CI (`process.env.CI` set) this throws, so the suite fails instead of passing
 * silently; elsewhere it prints why the tests that need it are skipped and returns `undefined`.
 */
export function findTool(
  name: string,
  fallback = `/usr/bin/${name}`,
  debianPackage = 'prometheus',
): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((d) => join(d, name)),
    fallback,
  ];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  const message = `${name} is not installed (Debian: apt-get install ${debianPackage})`;
  if (process.env.CI) throw new Error(`${message}; CI must run these tests.`);
  console.warn(`Skipping the tests that need ${name}: ${message}.`);
  return undefined;
}
