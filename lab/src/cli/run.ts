import { type CliIo, EXIT } from './command.js';
import { COMMANDS } from './commands.js';

function usage(): string {
  const lines = [
    'Usage: npm run lab -- <command> [options]   (or node lab/dist/cli.js <command>)',
    '',
    "Commands of prazo's lab (the repository's, not part of the package):",
  ];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(12)}${summary}`);
  lines.push(
    '',
    "The library's own commands (calibrate, pool): npx prazo --help.",
    '',
    'Options:',
    '  -h, --help     show this help',
    '',
    'Run `npm run lab -- <command> --help` or `npm run lab -- help <command>` for the options of a command.',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Runs the lab's CLI with `argv` (without the node and script paths). Its commands keep the names
 * they have in the docs and reports: `prazo drill`, `prazo simulate`, `prazo double`.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  // `help drill` is `drill --help`.
  if (name === 'help' && rest.length > 0) return runCli([rest[0]!, '--help'], io);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.stderr.write(`prazo: unknown command "${name}". Run \`npm run lab -- --help\`.\n`);
    return EXIT.badInput;
  }
  const command = await entry.load();
  return command(rest, io);
}
