import { createCli } from '@prazo/cli-kit';
import { COMMANDS } from './commands.js';

/**
 * Runs the lab's CLI with `argv` (without the node and script paths). Its commands keep the names
 * they have in the docs and reports: `prazo drill`, `prazo simulate`, `prazo double`.
 */
export const runCli = createCli({
  commands: COMMANDS,
  usageHead: [
    'Usage: npm run lab -- <command> [options]   (or node lab/dist/cli.js <command>)',
    '',
    "Commands of prazo's lab (the repository's, not part of the package):",
  ],
  usageTail: [
    '',
    "The library's own commands (calibrate, pool): npx prazo --help.",
    '',
    'Options:',
    '  -h, --help     show this help',
    '',
    'Run `npm run lab -- <command> --help` or `npm run lab -- help <command>` for the options of a command.',
  ],
  helpHint: 'Run `npm run lab -- --help`.',
});
