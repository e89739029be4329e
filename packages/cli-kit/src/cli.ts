import { type CliIo, type Command, EXIT } from './command.js';

/** A sub-command as the command line lists it: a one-line summary, and how to load it. */
export interface CommandEntry {
  readonly summary: string;
  /** Loads the command's module only when it runs, so `--help` stays fast. */
  readonly load: () => Promise<Command>;
}

/**
 * The sub-commands, by name, frozen and with no prototype: `prazo valueOf` or `prazo __proto__` must
 * be an unknown command, not one of Object's methods.
 */
export function commandTable(
  entries: Readonly<Record<string, CommandEntry>>,
): Readonly<Record<string, CommandEntry>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, CommandEntry>, entries));
}

/** What sets one command line apart from the other. */
export interface CliSpec {
  readonly commands: Readonly<Record<string, CommandEntry>>;
  /** The help's lines above the list of commands. */
  readonly usageHead: readonly string[];
  /** The help's lines below it (options, where to read more). */
  readonly usageTail: readonly string[];
  /** What `--version` and `-v` print; without it they are unknown commands. */
  readonly version?: string;
  /** Where to look, said after `unknown command "x".`: ``Run `prazo --help`.`` */
  readonly helpHint: string;
  /** For a name that is no command here but lives elsewhere: the line that says where (no newline). */
  readonly elsewhere?: (name: string) => string | undefined;
}

/**
 * A command line's top level: `--help`, `-h`, `help` and no argument print the usage (no argument:
 * exit 2); `help <command>` is `<command> --help`; `--version`; then the command, loaded when it runs.
 * Returns the function that runs it with `argv` (without the node and script paths).
 */
export function createCli(spec: CliSpec): Command {
  const usage = (): string => {
    const lines = [...spec.usageHead];
    for (const [name, { summary }] of Object.entries(spec.commands))
      lines.push(`  ${name.padEnd(12)}${summary}`);
    lines.push(...spec.usageTail);
    return `${lines.join('\n')}\n`;
  };
  const run = async (argv: string[], io: CliIo): Promise<number> => {
    const [name, ...rest] = argv;
    if (name === 'help' && rest.length > 0) return run([rest[0]!, '--help'], io);
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      io.stdout.write(usage());
      return name === undefined ? EXIT.badInput : EXIT.ok;
    }
    if (spec.version !== undefined && (name === '--version' || name === '-v')) {
      io.stdout.write(`${spec.version}\n`);
      return EXIT.ok;
    }
    const entry = spec.commands[name];
    if (!entry) {
      const elsewhere = spec.elsewhere?.(name);
      io.stderr.write(`${elsewhere ?? `prazo: unknown command "${name}". ${spec.helpHint}`}\n`);
      return EXIT.badInput;
    }
    const command = await entry.load();
    return command(rest, io);
  };
  return run;
}
