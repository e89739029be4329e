import { writeFileSync } from 'node:fs';
import { type CliIo, EXIT, unknownOption } from '@prazo/cli-kit';
import { InvalidInputError, isPrazoError } from 'prazo';
import { formatSimulationHtml } from '../simulate/html.js';
import { formatSimulationJson, formatSimulationTable, type SimulationResult } from '../simulate/report.js';
import {
  AMPLIFICATION_DEFAULTS,
  type AmplificationOptions,
  normalizeAmplificationOptions,
  simulateAmplification,
} from '../simulate/scenarios/amplification.js';
import {
  INSTANCES_DEFAULTS,
  type InstancesOptions,
  normalizeInstancesOptions,
  simulateInstances,
} from '../simulate/scenarios/instances.js';
import {
  normalizeOverloadOptions,
  OVERLOAD_DEFAULTS,
  type OverloadOptions,
  simulateOverload,
} from '../simulate/scenarios/overload.js';
import {
  normalizeTailOptions,
  simulateTail,
  TAIL_DEFAULTS,
  type TailOptions,
} from '../simulate/scenarios/tail.js';
import {
  formatUtilizationSweep,
  SWEEP_UTILIZATIONS,
  sweepUtilization,
  type UtilizationSweep,
} from '../simulate/scenarios/utilization-sweep.js';

const SCENARIOS = ['amplification', 'tail', 'instances', 'overload'] as const;
type Scenario = (typeof SCENARIOS)[number];

/** One line of help per option, by option name; the flag is the kebab-case name. */
const AMPLIFICATION_HELP: Record<keyof AmplificationOptions, string> = {
  seed: 'seed of every random draw',
  durationMs: 'simulated time, ms',
  rps: 'offered load, user requests per second (Poisson)',
  servers: 'workers of the dependency',
  serviceMeanMs: 'mean service time, ms (log-normal)',
  serviceSigma: 'shape σ of the service-time log-normal',
  queueLimit: 'requests that may wait; one more gets a 503',
  rejectMs: 'latency of a 503 refusal, ms',
  cancelAbandoned: 'drop queued requests whose client gave up (flag)',
  triggerStartMs: 'start of the trigger, ms from the start',
  triggerDurationMs: 'length of the trigger, ms',
  triggerCapacityFactor: 'share of the workers left during the trigger',
  triggerErrorRate: 'share of responses failing with 500 during the trigger',
  userDeadlineMs: 'how long a user waits, ms',
  attempts: 'attempts per request, the first included',
  fixedTimeoutMs: 'fixed timeout of naive, backoff and budget, ms',
  backoffBaseMs: 'backoff base, ms',
  backoffCapMs: 'backoff cap, ms',
  budgetWindowMs: 'retry budget window, ms',
  budgetMaxRatio: 'retry budget: extras ÷ originals',
  budgetMinPerSecond: 'retry budget floor, extras per second',
  slack: 'calibration slack of the prazo client (timeout = healthy p99 × slack)',
  warmupMs: 'healthy run that measures the p99 prazo calibrates on, ms',
  healthLatencyFactor: 'healthy second: dependency p99 ≤ this × healthy p99',
  healthMinSuccess: 'healthy second: at least this share of users served',
  sustainMs: 'healthy time in a row that counts as recovered, ms',
  strategies: 'comma-separated: naive,backoff,budget,prazo',
};

const TAIL_HELP: Record<keyof TailOptions, string> = {
  seed: 'seed of every random draw',
  durationMs: 'simulated time, ms',
  warmupMs: 'fan-outs started before this are not counted, ms',
  fanoutsPerSecond: 'fan-out requests per second (Poisson)',
  fanout: 'sub-requests per fan-out',
  servers: 'servers (each sub-request and each hedge goes to a random one)',
  serviceMeanMs: 'mean service time of a sub-request, ms (log-normal)',
  serviceSigma: 'shape σ of that log-normal',
  pauseEveryMs: 'mean time between two pauses of one server, ms',
  pauseMeanMs: 'mean pause length, ms (log-normal)',
  pauseSigma: 'shape σ of the pause length',
  fixedHedgeMs: 'delay of the fixed-delay policy, ms',
  timerResolutionMs: 'client timer tick, ms (0: ideal timers)',
  hedgePercentile: 'percentile of the live latency after which the p95 policy hedges',
  budgetWindowMs: 'retry budget window shared by the hedges, ms',
  budgetMaxRatio: 'retry budget: extras ÷ originals',
  budgetMinPerSecond: 'retry budget floor, extras per second',
  strategies: 'comma-separated: none,fixed,p95',
};

const INSTANCES_HELP: Record<keyof InstancesOptions, string> = {
  seed: 'seed of every random draw',
  durationMs: 'simulated time, ms',
  rps: 'user requests per second (Poisson)',
  instances: 'instances of the dependency',
  sick: 'instances answering 503',
  sickErrorRate: 'share of its calls a sick instance answers with 503',
  slow: 'instances answering later than the others',
  slowExtraMs: 'extra latency of a slow instance, ms',
  refusing: 'instances refusing connections',
  workers: 'workers per instance',
  serviceMeanMs: 'mean service time, ms (log-normal)',
  serviceSigma: 'shape σ of the service-time log-normal',
  queueLimit: 'requests that may wait per instance; one more gets a 503',
  rejectMs: 'time to a 503 or a refused connect, ms',
  attempts: 'attempts per request, the first included',
  attemptTimeoutMs: 'timeout of one attempt, ms',
  budgetWindowMs: "prazo's retry budget window, ms",
  budgetMaxRatio: 'retry budget: extras ÷ originals',
  budgetMinPerSecond: 'retry budget floor, extras per second',
  strategies: 'comma-separated: naive,prazo',
};

const OVERLOAD_HELP: Record<keyof OverloadOptions, string> = {
  seed: 'seed of every random draw',
  durationMs: 'simulated time, ms',
  warmupMs: 'requests started before this are not counted, ms',
  instances: 'instances of the supplier',
  workers: 'workers per instance (one request at a time each)',
  serviceMs: 'mean service time, ms (log-normal)',
  serviceSigma: 'shape σ of the service-time log-normal',
  factor: 'offered load ÷ capacity (instances × workers ÷ service time)',
  userDeadlineMs: 'how long a user waits, ms (later answers are not goodput)',
  clients: 'client processes (each with its own budget, limit and throttle)',
  attempts: 'attempts per request, the first included',
  naiveTimeoutMs: 'timeout of one attempt of the naive client, ms',
  slack: 'calibration slack of the prazo clients (timeout = healthy p99 × slack)',
  budgetMaxRatio: 'retry budget per client: extras ÷ originals',
  configs: 'comma-separated: naive,prazo,protected',
};

const HELP_BY_SCENARIO: Record<Scenario, Record<string, string>> = {
  amplification: AMPLIFICATION_HELP,
  tail: TAIL_HELP,
  instances: INSTANCES_HELP,
  overload: OVERLOAD_HELP,
};

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function help(scenario: Scenario | undefined): string {
  const lines = [
    'Usage: prazo simulate <amplification|tail|instances|overload> [options]',
    '',
    "A deterministic discrete-event simulation (virtual time, seeded) whose clients use prazo's own",
    'policy code: retry amplification and metastable failure (amplification), hedged fan-outs (tail),',
    'a fleet of instances of which some are sick or slow (instances), a supplier offered 3× its capacity',
    "with and without prazo's overload protections (overload).",
    '',
    'Output:',
    '  --json          print the result as JSON (identical for identical seed and options)',
    '  --html FILE     also write a self-contained HTML page with the charts',
    '  --help          this help (prazo simulate <scenario> --help lists only that scenario)',
    '',
  ];
  const section = (title: string, defaults: object, texts: Record<string, string>) => {
    lines.push(`${title} options (default in brackets):`);
    for (const [key, text] of Object.entries(texts)) {
      const value = (defaults as Record<string, unknown>)[key];
      const shown = Array.isArray(value) ? value.join(',') : String(value);
      lines.push(`  --${kebab(key).padEnd(26)}${text} [${shown}]`);
    }
    lines.push('');
  };
  if (scenario === undefined || scenario === 'amplification') {
    section('amplification', AMPLIFICATION_DEFAULTS, AMPLIFICATION_HELP);
    lines.splice(
      lines.length - 1,
      0,
      `  --sweep                   run the dependency at ${SWEEP_UTILIZATIONS.map((u) => `${u * 100}`).join(', ')} % utilisation, naive with`,
      '                            and without its retries (the trigger fails 20 % of answers unless',
      '                            --trigger-error-rate says otherwise), and print where the retries',
      '                            stop adding success (no --rps, no --html)',
    );
  }
  if (scenario === undefined || scenario === 'tail') section('tail', TAIL_DEFAULTS, TAIL_HELP);
  if (scenario === undefined || scenario === 'instances')
    section('instances', INSTANCES_DEFAULTS, INSTANCES_HELP);
  if (scenario === undefined || scenario === 'overload')
    section('overload', OVERLOAD_DEFAULTS, OVERLOAD_HELP);
  lines.push('Exit status: 0 done, 2 bad arguments.');
  return `${lines.join('\n')}\n`;
}

/** What {@link parseSimulateArgs} understood. */
export interface Parsed {
  scenario: Scenario;
  options: Record<string, unknown>;
  json: boolean;
  html: string | undefined;
  help: boolean;
  /** `amplification --sweep`: the utilisation sweep instead of one run. */
  sweep?: boolean;
}

/**
 * Reads the arguments of `prazo simulate` (without the command name). Option values are checked later
 * by the scenario's normaliser.
 * @throws {InvalidInputError} for an unknown scenario or flag, a missing value, or a value that is not a number.
 */
export function parseSimulateArgs(argv: string[]): Parsed {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h')
    return { scenario: 'amplification', options: {}, json: false, html: undefined, help: true };
  if (first === undefined)
    throw new InvalidInputError('which scenario? amplification, tail, instances or overload (see --help)');
  if (!(SCENARIOS as readonly string[]).includes(first))
    throw new InvalidInputError(
      `unknown scenario "${first}" (expected amplification, tail, instances or overload)`,
    );
  const scenario = first as Scenario;
  const texts = HELP_BY_SCENARIO[scenario];
  const byFlag = new Map(Object.keys(texts).map((key) => [kebab(key), key]));
  const parsed: Parsed = { scenario, options: {}, json: false, html: undefined, help: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (!arg.startsWith('--')) throw new InvalidInputError(`unexpected argument "${arg}" (see --help)`);
    const eq = arg.indexOf('=');
    const flag = arg.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    if (flag === 'help' || flag === 'h') {
      parsed.help = true;
      continue;
    }
    if (flag === 'json') {
      parsed.json = true;
      continue;
    }
    if (flag === 'sweep' && scenario === 'amplification') {
      if (inline !== undefined) throw new InvalidInputError('--sweep takes no value');
      parsed.sweep = true;
      continue;
    }
    const key = flag === 'html' ? 'html' : byFlag.get(flag);
    if (key === undefined) throw unknownOption(`--${flag}`, scenario);
    if (key === 'cancelAbandoned' && inline === undefined) {
      parsed.options[key] = true;
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined) throw new InvalidInputError(`--${flag} needs a value`);
    if (key === 'html') parsed.html = value;
    else if (key === 'strategies' || key === 'configs')
      parsed.options[key] = value.split(',').map((s) => s.trim());
    else if (key === 'cancelAbandoned') {
      if (value !== 'true' && value !== 'false')
        throw new InvalidInputError(`--${flag} expects true or false, got "${value}"`);
      parsed.options[key] = value === 'true';
    } else {
      const number = value.trim() === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(number)) throw new InvalidInputError(`--${flag} expects a number, got "${value}"`);
      parsed.options[key] = number;
    }
  }
  return parsed;
}

/** How long a run may take before it reports progress on stderr, ms. */
const QUIET_MS = 2000;

/**
 * `prazo simulate amplification|tail|instances|overload`: runs a scenario and prints a table (or `--json`), optionally
 * writing an HTML page (`--html FILE`). Progress goes to stderr when the run takes over 2 s.
 */
export async function simulate(argv: string[], io: CliIo): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseSimulateArgs(argv);
    // Validate everything before a long run starts.
    if (!parsed.help) {
      if (parsed.scenario === 'amplification') normalizeAmplificationOptions(parsed.options);
      else if (parsed.scenario === 'tail') normalizeTailOptions(parsed.options);
      else if (parsed.scenario === 'overload') normalizeOverloadOptions(parsed.options);
      else normalizeInstancesOptions(parsed.options);
    }
  } catch (error) {
    return badInput(io, error);
  }
  if (parsed.help) {
    io.stdout.write(help(argv[0] === parsed.scenario ? parsed.scenario : undefined));
    return EXIT.ok;
  }

  if (parsed.sweep === true) return runSweep(parsed, io);

  const started = Date.now();
  let shown = '';
  let progressed = false;
  const onProgress = (label: string, fraction: number) => {
    if (Date.now() - started < QUIET_MS) return;
    const line = `prazo simulate ${parsed.scenario}: ${label} ${Math.floor(fraction * 10) * 10} %`;
    if (line === shown) return;
    shown = line;
    progressed = true;
    const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
    io.stderr.write(tty ? `\r${line.padEnd(60)}` : `${line}\n`);
  };
  const result: SimulationResult =
    parsed.scenario === 'amplification'
      ? simulateAmplification(parsed.options, onProgress)
      : parsed.scenario === 'tail'
        ? simulateTail(parsed.options, onProgress)
        : parsed.scenario === 'overload'
          ? simulateOverload(parsed.options, onProgress)
          : simulateInstances(parsed.options, onProgress);
  if (progressed) {
    const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
    io.stderr.write(
      `${tty ? '\r' : ''}prazo simulate ${parsed.scenario}: done in ${((Date.now() - started) / 1000).toFixed(1)} s (${result.events} events)${tty ? ' '.repeat(10) : ''}\n`,
    );
  }
  if (parsed.html !== undefined) {
    try {
      writeFileSync(parsed.html, formatSimulationHtml(result));
    } catch (error) {
      io.stderr.write(`prazo simulate: cannot write ${parsed.html}: ${(error as Error).message}\n`);
      return EXIT.badInput;
    }
  }
  io.stdout.write(parsed.json ? formatSimulationJson(result) : formatSimulationTable(result));
  return EXIT.ok;
}

/** `prazo simulate amplification --sweep`: the utilisation sweep, as a table or JSON. */
function runSweep(parsed: Parsed, io: CliIo): number {
  let sweep: UtilizationSweep;
  try {
    if (parsed.html !== undefined)
      throw new InvalidInputError('--sweep writes no HTML page; leave out --html');
    sweep = sweepUtilization(parsed.options, (label) =>
      io.stderr.write(`prazo simulate amplification --sweep: ${label}\n`),
    );
  } catch (error) {
    return badInput(io, error);
  }
  io.stdout.write(parsed.json ? `${JSON.stringify(sweep, null, 2)}\n` : formatUtilizationSweep(sweep));
  return EXIT.ok;
}

function badInput(io: CliIo, error: unknown): number {
  if (isPrazoError(error, 'INVALID_INPUT')) {
    io.stderr.write(`prazo simulate: ${error.message}\n`);
    return EXIT.badInput;
  }
  if (isPrazoError(error, 'INVALID_OPTION')) {
    // Name the flag the user typed, not the option of the API.
    const option = (error as { option?: unknown }).option;
    const message =
      typeof option === 'string'
        ? error.message.replace(`\`${option}\``, `--${kebab(option)}`)
        : error.message;
    io.stderr.write(`prazo simulate: ${message}\n`);
    return EXIT.badInput;
  }
  throw error;
}
