import { type CliIo, EXIT } from './command.js';
import { COMMANDS, LAB_COMMANDS } from './commands.js';

function usage(): string {
  const lines = ['Usage: prazo <command> [options]', '', 'Commands:'];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(12)}${summary}`);
  lines.push(
    '',
    'Options:',
    '  -h, --help     show this help',
    '  -v, --version  print the version of prazo',
    '',
    'Run `prazo <command> --help` or `prazo help <command>` for the options of a command.',
  );
  return `${lines.join('\n')}\n`;
}

/** Runs the `prazo` CLI with `argv` (without the node and script paths). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  // `prazo help calibrate` is `prazo calibrate --help`.
  if (name === 'help' && rest.length > 0) return runCli([rest[0]!, '--help'], io);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const entry = COMMANDS[name];
  if (!entry && LAB_COMMANDS.includes(name)) {
    io.stderr.write(
      `prazo: "${name}" is a command of prazo's lab, which is not part of the package: in a checkout of the repository, \`npm start\` runs the drill, \`npm run lab -- ${name}\` the lab's command (docs/lab.md).\n`,
    );
    return EXIT.badInput;
  }
  if (!entry) {
    io.stderr.write(`prazo: unknown command "${name}". Run \`prazo --help\`.\n`);
    return EXIT.badInput;
  }
  const command = await entry.load();
  return command(rest, io);
}

declare const __PRAZO_VERSION__: string | undefined;
const VERSION = typeof __PRAZO_VERSION__ === 'string' ? __PRAZO_VERSION__ : '0.0.0-dev';
