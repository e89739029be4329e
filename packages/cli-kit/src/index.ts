/**
 * `@prazo/cli-kit`: what the library's command line (`prazo calibrate | pool`, src/cli/) and the
 * lab's (`drill | simulate | double`, lab/src/cli/) share, so each fact has one owner. Private to
 * the repository: tsup bundles it into both builds, and it uses the library only through its entry
 * points, as the lab does.
 */
export { joinNegativeValues, parseFlags, unknownOption } from './args.js';
export { type CliSpec, type CommandEntry, commandTable, createCli } from './cli.js';
export { type CliIo, type Command, EXIT } from './command.js';
export { formatMs } from './format.js';
