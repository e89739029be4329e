import type { Writable } from 'node:stream';

/** Where the CLI writes; injected so tests can capture output. */
export interface CliIo {
  stdout: Pick<Writable, 'write'>;
  stderr: Pick<Writable, 'write'>;
}

/** A lab sub-command: takes its arguments, returns the process exit code. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;

/** Exit codes, the same as the library's CLI (`prazo --help`). */
export const EXIT = Object.freeze({
  ok: 0,
  /** The command ran but raised a warning worth a non-zero status (see each command's help). */
  warning: 1,
  /** Bad input: unknown flag, unreadable file, invalid value. */
  badInput: 2,
});
