import { captureCli } from '@prazo/cli-kit/capture';
import { runCli } from './run.js';

/** Runs the CLI in-process with captured output. */
export const cli = (...argv: string[]) => captureCli(runCli, argv);
