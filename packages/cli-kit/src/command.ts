import type { Writable } from 'node:stream';

/** Where a command writes; injected so tests can capture output. */
export interface CliIo {
  stdout: Pick<Writable, 'write'>;
  stderr: Pick<Writable, 'write'>;
}

/** A sub-command: takes its arguments, returns the process exit code. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;

/** Exit codes shared by every command of both command lines (the library's `prazo` and the lab's). */
export const EXIT = Object.freeze({
  ok: 0,
  /** The command ran but raised a warning worth a non-zero status (see each command's help). */
  warning: 1,
  /** Bad input: unknown flag, unreadable file, invalid value. */
  badInput: 2,
  /** A data source (a Prometheus server) could not be read, or answered something unusable. */
  sourceFailed: 3,
});
