import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The executable `name` in a directory of `path` (the PATH's form), else in one of `extraDirs`
 * (where Debian installs it, when the PATH leaves that out), or null when it is not installed.
 */
export function findExecutable(name: string, extraDirs: readonly string[], path: string): string | null {
  for (const dir of [...path.split(delimiter), ...extraDirs]) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/** A TCP port of 127.0.0.1 free now (the OS's pick), for a process the drill starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
