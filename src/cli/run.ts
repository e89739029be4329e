import type { Writable } from 'node:stream';

/** Where the CLI writes; injected so tests can capture output. */
export interface CliIo {
  stdout: Pick<Writable, 'write'>;
  stderr: Pick<Writable, 'write'>;
}

/** A `prazo` sub-command: takes its arguments, returns the process exit code. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;

/** Exit codes shared by every command. */
export const EXIT = Object.freeze({
  ok: 0,
  /** The command ran but raised a warning worth a non-zero status (see each command's help). */
  warning: 1,
  /** Bad input: unknown flag, unreadable file, invalid value. */
  badInput: 2,
  /** A data source (a Prometheus server) could not be read, or answered something unusable. */
  sourceFailed: 3,
});

// No prototype: `prazo valueOf` or `prazo __proto__` must be an unknown command, not Object's method.
const commands: Record<string, { summary: string; load: () => Promise<Command> }> = Object.create(null);

/** Registers a sub-command (each command module calls this through `commands.ts`). */
export function registerCommand(name: string, summary: string, load: () => Promise<Command>): void {
  commands[name] = { summary, load };
}

function usage(): string {
  const lines = ['Usage: prazo <command> [options]', '', 'Commands:'];
  for (const [name, { summary }] of Object.entries(commands)) lines.push(`  ${name.padEnd(12)}${summary}`);
  lines.push('', 'Run `prazo <command> --help` for the options of a command.');
  return `${lines.join('\n')}\n`;
}

/** Runs the `prazo` CLI with `argv` (without the node and script paths). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  await import('./commands.js');
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const entry = commands[name];
  if (!entry) {
    io.stderr.write(`prazo: unknown command "${name}". Run \`prazo --help\`.\n`);
    return EXIT.badInput;
  }
  const command = await entry.load();
  return command(rest, io);
}

declare const __PRAZO_VERSION__: string | undefined;
const VERSION = typeof __PRAZO_VERSION__ === 'string' ? __PRAZO_VERSION__ : '0.0.0-dev';
