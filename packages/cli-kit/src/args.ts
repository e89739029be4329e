import { InvalidInputError } from 'prazo';

/**
 * Runs a `node:util` `parseArgs` call and turns its errors (unknown flag, missing value, stray argument)
 * into bad input.
 *
 * @throws {InvalidInputError} with parseArgs' own explanation.
 */
export function parseFlags<R>(parse: () => R): R {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unknown =
      (error as { code?: unknown } | null)?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? /^Unknown option '([^']+)'/.exec(message)
        : null;
    if (unknown) throw unknownOption(unknown[1]!);
    throw new InvalidInputError(`${message} (see --help)`);
  }
}

/**
 * The one wording of an unknown flag, for every command: `unknown option --frobnicate (see --help)`,
 * with the scope the flag was looked up in when the command has several (`for tail`).
 */
export function unknownOption(flag: string, scope?: string): InvalidInputError {
  return new InvalidInputError(
    `unknown option ${flag}${scope === undefined ? '' : ` for ${scope}`} (see --help)`,
  );
}

/**
 * Joins a value-taking flag and a negative number after it (`--p99 -5` → `--p99=-5`): parseArgs would
 * otherwise call the value "ambiguous" and hide the real problem, which the flag's own check then names.
 */
export function joinNegativeValues(
  argv: readonly string[],
  options: Readonly<Record<string, { type: 'string' | 'boolean' }>>,
): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (
      arg.startsWith('--') &&
      options[arg.slice(2)]?.type === 'string' &&
      next !== undefined &&
      NEGATIVE_NUMBER.test(next)
    ) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

const NEGATIVE_NUMBER = /^-(?:\d|\.\d)/;
