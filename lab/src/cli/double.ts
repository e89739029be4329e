import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type CliIo, EXIT, joinNegativeValues, parseFlags } from '@prazo/cli-kit';
import { InvalidInputError, isPrazoError } from 'prazo';
import { ADMIN_PREFIX, type Behaviour, MAX_INSTANCES, parseBehaviourJson, startDoubles } from '../index.js';

const HELP = `Usage: prazo double [options]

Starts a dependency double on 127.0.0.1: an HTTP server whose behaviour (latency, statuses,
hangs, resets, refused or timing-out connects) can be switched while it runs.

Options:
  --port N                 port of instance 0; instance i listens on N + i (0: any free port) [0]
  --instances N            how many instances of the dependency (1-${MAX_INSTANCES}) [1]
  --behaviour JSON|@file   behaviour at start for every instance, as JSON or @path/to/file.json
  --seed N                 seed of instance 0's random draws; instance i uses N + i [1]
  -h, --help               show this help

Each instance serves an admin API on its own port too (reachable while it refuses connections):
  GET  <admin>/stats       counters: received, originals, retries, hedges, afterDeadline, ...
  GET  <admin>/behaviour   current behaviour
  POST <admin>/behaviour   replace it, e.g. '{"statuses":[{"status":503,"share":0.2}]}'
  POST <admin>/reset       zero the counters

Stops cleanly on Ctrl-C (SIGINT) or SIGTERM. See docs/lab.md.
`;

/** Options of {@link runDouble} that tests use instead of process signals. */
export interface RunDoubleOptions {
  /** Stops the doubles when aborted. @default stops on SIGINT / SIGTERM */
  signal?: AbortSignal;
}

/**
 * `prazo double`: starts the doubles, prints their URLs, and runs until SIGINT / SIGTERM (or `signal`).
 *
 * @returns the exit code: 0 after a clean stop, 2 for bad arguments.
 */
export async function runDouble(argv: string[], io: CliIo, options: RunDoubleOptions = {}): Promise<number> {
  let parsed: { port: number; instances: number; seed: number; behaviour: Behaviour | undefined } | undefined;
  try {
    parsed = await readArguments(argv);
  } catch (error) {
    if (isPrazoError(error)) {
      io.stderr.write(`prazo double: ${oneLine(error.message)}\n`);
      return EXIT.badInput;
    }
    throw error;
  }
  if (parsed === undefined) {
    io.stdout.write(HELP);
    return EXIT.ok;
  }

  let group: Awaited<ReturnType<typeof startDoubles>>;
  try {
    group = await startDoubles(parsed.instances, {
      port: parsed.port,
      adminPort: 0,
      seed: parsed.seed,
      ...(parsed.behaviour ? { behaviour: parsed.behaviour } : {}),
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    io.stderr.write(
      `prazo double: could not start: ${code === 'EADDRINUSE' ? `port in use (${oneLine(String((error as Error).message))})` : oneLine(String((error as Error).message))}\n`,
    );
    return EXIT.badInput;
  }

  const lines = [
    `prazo double: ${group.instances.length} instance${group.instances.length === 1 ? '' : 's'} on 127.0.0.1 (Ctrl-C stops)`,
  ];
  for (const double of group.instances) {
    lines.push(`  instance ${double.instance}  ${double.url}  admin ${double.adminUrl}`);
  }
  lines.push(
    `  admin API: GET ${ADMIN_PREFIX}/stats · GET|POST ${ADMIN_PREFIX}/behaviour · POST ${ADMIN_PREFIX}/reset`,
  );
  io.stdout.write(`${lines.join('\n')}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      options.signal?.removeEventListener('abort', stop);
      resolve();
    };
    if (options.signal) {
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    } else {
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }
  });
  await group.close();
  io.stdout.write('prazo double: stopped\n');
  return EXIT.ok;
}

const FLAGS = {
  port: { type: 'string' },
  instances: { type: 'string' },
  behaviour: { type: 'string' },
  seed: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function readArguments(argv: string[]) {
  // `--port -1` reaches the range check below, not parseArgs' "ambiguous argument".
  const { values, positionals } = parseFlags(() =>
    parseArgs({
      args: joinNegativeValues(argv, FLAGS),
      allowPositionals: true,
      strict: true,
      options: FLAGS,
    }),
  );
  if (values.help) return undefined;
  if (positionals.length > 0)
    throw new InvalidInputError(`unexpected argument "${positionals[0]}" (see --help)`);
  const port = integer(values.port, '--port', 0, 0, 65_535);
  const instances = integer(values.instances, '--instances', 1, 1, MAX_INSTANCES);
  if (port !== 0 && port + instances - 1 > 65_535) {
    throw new InvalidInputError(`--port ${port} with --instances ${instances} runs past port 65535`);
  }
  const seed = integer(values.seed, '--seed', 1, -2_147_483_648, 2_147_483_647);
  let behaviour: Behaviour | undefined;
  if (values.behaviour !== undefined) {
    const text = values.behaviour.startsWith('@')
      ? await readBehaviourFile(values.behaviour.slice(1))
      : values.behaviour;
    behaviour = parseBehaviourJson(text);
  }
  return { port, instances, seed, behaviour };
}

async function readBehaviourFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new InvalidInputError(
      `--behaviour: cannot read ${path} (${(error as { code?: string }).code ?? 'error'})`,
    );
  }
}

function integer(text: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = /^-?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${flag} must be an integer in [${min}, ${max}], got "${text}"`);
  }
  return value;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
