import { createCli } from '@prazo/cli-kit';
import { COMMANDS, LAB_COMMANDS } from './commands.js';

declare const __PRAZO_VERSION__: string | undefined;
const VERSION = typeof __PRAZO_VERSION__ === 'string' ? __PRAZO_VERSION__ : '0.0.0-dev';

/** Runs the `prazo` CLI with `argv` (without the node and script paths). */
export const runCli = createCli({
  commands: COMMANDS,
  usageHead: ['Usage: prazo <command> [options]', '', 'Commands:'],
  usageTail: [
    '',
    'Options:',
    '  -h, --help     show this help',
    '  -v, --version  print the version of prazo',
    '',
    'Run `prazo <command> --help` or `prazo help <command>` for the options of a command.',
  ],
  version: VERSION,
  helpHint: 'Run `prazo --help`.',
  elsewhere: (name) =>
    LAB_COMMANDS.includes(name)
      ? `prazo: "${name}" is a command of prazo's lab, which is not part of the package: in a checkout of the repository, \`npm start\` runs the drill, \`npm run lab -- ${name}\` the lab's command (docs/lab.md).`
      : undefined,
});
