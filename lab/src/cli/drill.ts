import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type CliIo, type Command, EXIT, unknownOption } from '@prazo/cli-kit';
import { isPrazoError } from 'prazo';
import { renderDashboardPage } from '../drill/dashboard/page.js';
import {
  type DashboardServer,
  reportDashboardData,
  startDashboardServer,
} from '../drill/dashboard/server.js';
import type { DrillOptions, PhaseLengths } from '../drill/drill-options.js';
import type { DrillReport } from '../drill/report/drill-report.js';
import { formatReportTable } from '../drill/report/table.js';
import { type DrillProgress, drillConfigs, runDrill } from '../drill/run-drill.js';

const HELP = `Usage: prazo drill [options]

Degrades a dependency under load and compares, on the same traffic, a service with naive settings
(30 s timeout, 3 attempts, no budget, no deadline, no hedging) and one calibrated by prazo.
Each service runs in its own process on 127.0.0.1; the supplier's three instances on 127.0.0.1,
127.0.0.2 and 127.0.0.3. Each instance has finite capacity: 2 workers behind an unbounded FIFO queue, its service
time sized so that the healthy checkouts keep it 60 % busy (--utilization), so latency and timeouts
grow with the load the clients send. Phases: healthy warm-up (prazo is calibrated from it) → a slow
tail on every instance (a few calls wait 1 s on I/O) → a trigger (every instance 3× slower for 3 s,
then healthy again: does the load the clients added outlive it?) → one instance sick (503), one slow
(+150 ms) → full degradation (the supplier answers at the naive timeout) → error burst (503s) →
recovery. 102 s of phases
by default, shorter with --quick. A whole run (start-up, pre-warm, overload experiment, report)
takes longer: the measured durations are in the README's "Measured durations".
Then the overload experiment: 3× the capacity of a supplier of known capacity (8 workers × 25 ms),
offered open loop to naive, to prazo, and to prazo with its overload protections at both ends
(adaptive concurrency and throttling in the client, deadline-aware admission with a CoDel queue in
the server): goodput and the latency of what was admitted, 6 s per configuration (4.5 s with --quick).

With --peers the same traffic also runs against the alternatives — two columns at a time, one turn
after another on the same seeded plan (naive and prazo first; three times as long), as six at once
are more than a 2-core machine holds — each set up as its own
documentation recommends (docs/drill.md cites the pages): cockatiel 3.x (retry with exponential
backoff, circuit breaker, per-attempt and whole-call timeouts), opossum (circuit breaker with timeout
and fallback), undici's interceptors.retry on an Agent with its timeouts, and HAProxy as a local
sidecar (timeouts, retry-on, redispatch, health checks, observe layer7). One table, one set of charts,
and a plain statement of every row where a peer matches or beats prazo. HAProxy must be installed
(apt-get install haproxy); when it is not, the drill says so and skips that column only.

Options:
  --quick              short phases (38 s of phases instead of 102 s)
  --peers              also run cockatiel, opossum, undici's retry interceptor and HAProxy
  --warmup S           warm-up length, seconds (also --trigger, --fleet, --degrade, --burst, --tail,
                       --recovery)
  --utilization U      how busy the healthy checkouts keep each supplier instance, 0.05–0.95
                       (default 0.6)
  --overload S         length of the overload experiment per configuration, seconds (0: leave it out)
  --rps N              offered load per configuration, requests per second (default 100)
  --pool N             slots of the shop's shared pool (default 50)
  --trigger-factor F   how many times slower the supplier serves during the trigger (default 3)
  --trigger-drop S     how long the trigger's capacity drop lasts, seconds (default 3; 2 with --quick)
  --seed N             seed of the supplier doubles (default 1)
  --json               print the report as JSON on stdout (instead of the table)
  --report FILE        where to write the HTML report (default reports/drill-<timestamp>.html)
  --port N             port of the live dashboard on 127.0.0.1 (default: any free port)
  --no-page            do not serve the live dashboard
  --strict             exit 1 when an acceptance check fails
  -h, --help           show this help

The live dashboard's URL is printed on stderr at start, with the progress; /metrics on the same
port serves Prometheus metrics. Exit codes: 0 done, 1 a check failed (--strict), 2 bad input,
130 interrupted.
`;

interface ParsedArgs {
  options: DrillOptions;
  json: boolean;
  report: string | null;
  port: number;
  page: boolean;
  strict: boolean;
  help: boolean;
}

const PHASE_FLAGS: Record<string, keyof PhaseLengths> = {
  '--warmup': 'warmupMs',
  '--trigger': 'triggerMs',
  '--fleet': 'fleetMs',
  '--degrade': 'degradeMs',
  '--burst': 'burstMs',
  '--tail': 'tailMs',
  '--recovery': 'recoveryMs',
};

class BadArgument extends Error {}

function parseArgs(argv: string[]): ParsedArgs {
  const parsed: ParsedArgs = {
    options: {},
    json: false,
    report: null,
    port: 0,
    page: true,
    strict: false,
    help: false,
  };
  const phases: Partial<PhaseLengths> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new BadArgument(`${flag} needs a value`);
      return v;
    };
    const number = (min: number, max: number, integer = false): number => {
      const text = value();
      const n = Number(text);
      if (
        text.trim() === '' ||
        !Number.isFinite(n) ||
        n < min ||
        n > max ||
        (integer && !Number.isInteger(n))
      )
        throw new BadArgument(
          `${flag} expects ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got "${text}"`,
        );
      return n;
    };
    const phaseKey = Object.hasOwn(PHASE_FLAGS, flag) ? PHASE_FLAGS[flag] : undefined;
    if (phaseKey) phases[phaseKey] = Math.round(number(0.5, 600) * 1000);
    else if (flag === '--quick') parsed.options.quick = true;
    else if (flag === '--peers') parsed.options.peers = true;
    else if (flag === '--rps') parsed.options.rps = number(1, 2000);
    else if (flag === '--utilization') parsed.options.utilization = number(0.05, 0.95);
    else if (flag === '--trigger-factor') parsed.options.triggerFactor = number(1, 100);
    else if (flag === '--trigger-drop') parsed.options.triggerDropMs = Math.round(number(0.1, 600) * 1000);
    else if (flag === '--overload') {
      const seconds = number(0, 120);
      if (seconds !== 0 && seconds < 1.5)
        throw new BadArgument(`--overload expects 0 or a number in [1.5, 120], got "${seconds}"`);
      parsed.options.overloadMs = Math.round(seconds * 1000);
    } else if (flag === '--pool') parsed.options.pool = number(1, 10_000, true);
    else if (flag === '--seed') parsed.options.seed = number(-2_147_483_648, 2_147_483_647, true);
    else if (flag === '--json') parsed.json = true;
    else if (flag === '--report') parsed.report = value();
    else if (flag === '--port') parsed.port = number(0, 65_535, true);
    else if (flag === '--no-page') parsed.page = false;
    else if (flag === '--strict') parsed.strict = true;
    else if (flag === '--help' || flag === '-h') parsed.help = true;
    else throw unknownOption(flag);
  }
  if (Object.keys(phases).length > 0) parsed.options.phases = phases;
  return parsed;
}

function progressWriter(io: CliIo): (p: DrillProgress) => void {
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  let lastPhase = '';
  let lastPlain = -Infinity;
  return (p) => {
    const left = Math.max(0, Math.ceil((p.totalMs - p.elapsedMs) / 1000));
    const line = `drill: ${p.label} — ${Math.ceil(p.phaseLeftMs / 1000)} s left in phase, ${left} s left in all`;
    if (tty) {
      io.stderr.write(`\r\x1b[2K${line}`);
    } else if (p.phase !== lastPhase || p.elapsedMs - lastPlain >= 10_000) {
      io.stderr.write(`${line}\n`);
      lastPlain = p.elapsedMs;
    }
    lastPhase = p.phase;
  };
}

/** The peers' npm packages that cannot be loaded here. */
async function missingPeerPackages(): Promise<string[]> {
  const missing: string[] = [];
  for (const [name, load] of [
    ['cockatiel', () => import('cockatiel')],
    ['opossum', () => import('opossum')],
  ] as const) {
    try {
      await load();
    } catch {
      missing.push(name);
    }
  }
  return missing;
}

/** `prazo drill`: runs the drill and prints the report. */
export const drill: Command = async (argv, io) => {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    if (isPrazoError(error, 'INVALID_INPUT')) io.stderr.write(`prazo drill: ${error.message}\n`);
    else if (error instanceof BadArgument) io.stderr.write(`prazo drill: ${error.message} (see --help)\n`);
    else throw error;
    return EXIT.badInput;
  }
  if (args.help) {
    io.stdout.write(HELP);
    return EXIT.ok;
  }
  if (args.options.peers) {
    // The peers' libraries are prazo's development dependencies: present in a checkout after npm ci.
    const missing = await missingPeerPackages();
    if (missing.length > 0) {
      io.stderr.write(
        `prazo drill: --peers needs ${missing.join(' and ')} (development dependencies of prazo): run it from a checkout of prazo after \`npm ci\`.\n`,
      );
      return EXIT.badInput;
    }
  }

  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let dashboard: DashboardServer | undefined;
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  try {
    if (args.page) {
      dashboard = await startDashboardServer(args.port);
      io.stderr.write(
        `drill: live dashboard at ${dashboard.url} (Prometheus metrics at ${dashboard.url}metrics)\n`,
      );
    }
    const { configs, skipped } = drillConfigs({ peers: args.options.peers === true });
    for (const skip of skipped) io.stderr.write(`drill: SKIPPED ${skip.config}: ${skip.reason}.\n`);
    io.stderr.write(`drill: starting the services (${configs.join(', ')}, each in its own processes)…\n`);
    let report: DrillReport;
    try {
      report = await runDrill(args.options, {
        signal: controller.signal,
        onReady: (c) => dashboard?.attach(c),
        onProgress: progressWriter(io),
        onOverload: (config) => {
          if (tty) io.stderr.write('\n');
          io.stderr.write(`drill: overload experiment (3× capacity) — ${config}\n`);
        },
      });
    } finally {
      if (tty) io.stderr.write('\n');
    }
    dashboard?.finish(report);
    const file = resolve(args.report ?? `reports/drill-${report.startedAt.replace(/[:.]/g, '-')}.html`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, renderDashboardPage(reportDashboardData(report), false));
    io.stderr.write(`drill: HTML report written to ${file}\n`);
    if (args.json) io.stdout.write(`${JSON.stringify({ ...report, reportFile: file }, null, 2)}\n`);
    else io.stdout.write(formatReportTable(report));
    return args.strict && report.checks.some((c) => !c.pass) ? EXIT.warning : EXIT.ok;
  } catch (error) {
    if (isPrazoError(error, 'CANCELLED') || controller.signal.aborted) {
      io.stderr.write('drill: interrupted; every service was stopped.\n');
      return 130;
    }
    if (isPrazoError(error, 'INVALID_OPTION')) {
      io.stderr.write(`prazo drill: ${error.message}\n`);
      return EXIT.badInput;
    }
    throw error;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await dashboard?.close();
  }
};

export default drill;
