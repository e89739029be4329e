import type { CliIo, Command } from './command.js';

/** Runs a command line in-process with captured output (tests). */
export async function captureCli(
  run: Command,
  argv: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
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
  const code = await run(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}
