// Instruction counts of a process's calls or requests, for the benchmarks whose question is a few
// percent of one that CPU time on a shared 2-core virtual machine cannot resolve (one round against
// the next moves by 10–30 %; the hypervisor steals up to 10 % of the CPU in some hours). Plain
// JavaScript, so that a process without a TypeScript loader (bench/lean-client.mjs, a server of
// bench/support/) can use it too.
//
// Two ways: a client process that marks its own segments (`countSegments`), or a process another
// one drives, whose counters the driver reads around each segment (`spawnCounted`,
// `instructionsOf`: the idempotency layer's server). The counted process runs under Valgrind's
// callgrind with V8's background tasks off
// (`--single-threaded`: the optimizing compiler and the garbage collector run on the main thread at
// points set by what the process has executed, not by how Valgrind schedules threads — with them
// on, one segment's count moved by a factor of two against the next). A client marks the
// segments it wants counted (`start`, `end` on stdout, each answered on stdin once the parent has
// read callgrind's counters with `callgrind_control -e Ir`), so what it does once — start, imports,
// warm-up, the JIT's first tiers — stays outside the counts.
//
// Needs `valgrind` (Debian: `apt-get install -y valgrind`). Under callgrind a call runs a few
// hundred times slower than natively; the callers size their runs for that.
import { execFileSync, spawn } from 'node:child_process';
import readline from 'node:readline';

/** Whether `valgrind` and `callgrind_control` can be run here. */
export function haveCallgrind() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * In the client process: says `word` (`start` or `end`) on stdout and resolves once the parent has
 * read the counters (a line on stdin).
 */
export function segmentMarks() {
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  return async (word) => {
    process.stdout.write(`${word}\n`);
    await lines.next();
  };
}

/** The instructions process `pid` has executed so far, every thread summed (callgrind's counters). */
export function instructionsOf(pid) {
  const out = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let total = 0;
  for (const match of out.matchAll(/^\s*Th\s*\d+\s+([\d,]+)\s*$/gm))
    total += Number(match[1].replaceAll(',', ''));
  if (total === 0) throw new Error(`no counters in callgrind_control's answer:\n${out}`);
  return total;
}

/**
 * Starts `node --single-threaded ...nodeArgs` under callgrind, its stdin and stdout piped to the
 * caller; {@link instructionsOf} reads its counters at any time.
 */
export function spawnCounted(nodeArgs) {
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    '--smc-check=all-non-file',
    process.execPath,
    '--single-threaded',
    ...nodeArgs,
  ];
  return spawn('valgrind', args, { stdio: ['pipe', 'pipe', 'ignore'] });
}

/**
 * Runs `node --single-threaded ...nodeArgs` under callgrind and counts the instructions of each
 * segment the client marks. Resolves with the counts, in order, and the last line the client printed
 * that starts with `{` (its report, parsed); `onSegment(index, instructions)` sees each as it ends.
 */
export async function countSegments(nodeArgs, onSegment = () => {}) {
  const client = spawnCounted(nodeArgs);
  const exited = new Promise((resolve) => client.once('exit', resolve));
  const segments = [];
  let startedAt = 0;
  let report;
  for await (const line of readline.createInterface({ input: client.stdout })) {
    if (line === 'start') startedAt = instructionsOf(client.pid);
    else if (line === 'end') {
      segments.push(instructionsOf(client.pid) - startedAt);
      onSegment(segments.length - 1, segments.at(-1));
    } else {
      if (line.startsWith('{')) report = JSON.parse(line);
      continue;
    }
    client.stdin.write('go\n');
  }
  const code = await exited;
  if (code !== 0) throw new Error(`the client under valgrind exited with ${code}`);
  return { segments, report };
}
