import type { CliIo } from './command.js';
import { runCli } from './run.js';

/** Runs the lab's CLI in-process with captured output. */
export async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: {
      write: (chunk: string) => {
        out.push(chunk);
        return true;
      },
    },
    stderr: {
      write: (chunk: string) => {
        err.push(chunk);
        return true;
      },
    },
  } as unknown as CliIo;
  const code = await runCli(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}
