import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { type Clock, InvalidOptionError, isPrazoError, systemClock, type Timer } from 'prazo';
import {
  afterServiceMs,
  type Behaviour,
  type BehaviourInput,
  DEFAULT_BEHAVIOUR,
  type Outcome,
  parseBehaviour,
  parseBehaviourJson,
  pickOutcome,
} from './behaviour.js';
import { type ConnectBlackhole, startConnectBlackhole } from './connect-blackhole.js';
import { createStatsCounter, type DoubleStats } from './double-stats.js';
import { createServer as createHttpServer } from './http-module.js';
import { sampleLatencyMs } from './latency-distribution.js';
import { createRandom, type Random } from './random.js';
import { createWorkerQueue, type WorkerQueue } from './worker-queue.js';

/** Options of {@link startDouble}. */
export interface DoubleOptions {
  /**
   * Interface to bind: an IPv4 loopback address (127.0.0.0/8, e.g. `'127.0.0.2'` for a second
   * instance of a fleet); nothing else is accepted: the double is a lab tool. @default '127.0.0.1'
   */
  host?: string;
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Behaviour at start (see {@link parseBehaviour}). @default DEFAULT_BEHAVIOUR (answers 200 at once) */
  behaviour?: BehaviourInput | Behaviour;
  /** Seed of the double's random draws (faults and latencies): the same seed replays the same run. @default 1 */
  seed?: number;
  /** Time source for arrival instants, deadlines and delays. @default systemClock */
  clock?: Clock;
  /** How many request records {@link DoubleStats.requests} keeps. @default 100 */
  keepRequests?: number;
  /**
   * Also serve the admin API on a separate port (0 picks one), which stays reachable while the
   * double refuses connections. `null`: admin only on the double's own port. @default null
   */
  adminPort?: number | null;
  /** Index of this instance in a group (reported in bodies and the `x-double-instance` header). @default 0 */
  instance?: number;
  /**
   * Finite capacity: this many workers, each holding a request for its drawn latency (then its
   * service time), behind an unbounded FIFO queue that keeps serving requests whose caller has gone
   * (see {@link createWorkerQueue}). Latency then grows with load, as a real service's does.
   * `null`: every request is answered after its drawn latency however many arrive (infinite
   * capacity). @default null
   */
  workers?: number | null;
  /**
   * Takes a data request over before the double counts or serves it: return true when it did (the
   * drill's supplier serves its order writes this way, beside the reads the double counts). The
   * double still closes the request's socket on `close()`. @default none
   */
  route?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** A double's worker queue now (see {@link DoubleOptions.workers}). */
export interface DoubleQueue {
  workers: number;
  busy: number;
  /** Requests waiting for a worker now. */
  waiting: number;
  /** Most requests waiting at once since the previous {@link Double.queue} call. */
  peakWaiting: number;
  /** Requests a worker finished after their caller had gone (closed the connection). */
  servedForNobody: number;
}

/** A running dependency double. */
export interface Double {
  /** Base URL, e.g. `http://127.0.0.1:41234`. Stable for the double's life (refuse re-listens on the same port). */
  readonly url: string;
  readonly port: number;
  /** Base URL of the admin API (ends with `/__double`). */
  readonly adminUrl: string;
  readonly instance: number;
  /** The current behaviour. */
  behaviour(): Behaviour;
  /**
   * Replaces the behaviour (fields not given take their defaults). Resolves once the listening
   * state matches it (refusing, timing out connects, or listening again on the same port).
   *
   * @throws InvalidInputError when the behaviour is invalid (the current one is kept).
   */
  set(behaviour: BehaviourInput | Behaviour): Promise<Behaviour>;
  /** A snapshot of the counters. */
  stats(): DoubleStats;
  /** The worker queue (`null` without {@link DoubleOptions.workers}); its peak starts over at each call. */
  queue(): DoubleQueue | null;
  /** Zeroes the counters. */
  reset(): void;
  /** Closes the listener and every socket, hung ones included; leaves no handle behind. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Defaults of {@link DoubleOptions}. */
export const DEFAULT_DOUBLE_OPTIONS = Object.freeze({
  host: '127.0.0.1',
  port: 0,
  seed: 1,
  keepRequests: 100,
  adminPort: null,
  instance: 0,
  workers: null,
});

/** Path prefix of the admin API. */
export const ADMIN_PREFIX = '/__double';
/** Largest admin request body: 64 KiB. */
const MAX_ADMIN_BODY_BYTES = 65_536;
/** Pause after ending idle connections on a switch to refusing (see `stopListening`). Unit: ms. */
const SETTLE_MS = 20;
/** Chunks a slow body is split into. */
const SLOW_BODY_CHUNKS = 10;
/**
 * Taking the double's own port back after refusing: tries and the pause between them (ms). While
 * nothing of the double listens, another server of this machine that asks for any free port may be
 * given it — a test that finds a refusing port listens on port 0 and closes at once — and until it
 * closes, the port cannot be listened on (`EADDRINUSE`).
 */
const RELISTEN_TRIES = 40;
const RELISTEN_PAUSE_MS = 25;

/** {@link DoubleOptions} after {@link normalizeDoubleOptions}: every field present. */
export interface NormalizedDoubleOptions {
  host: string;
  port: number;
  behaviour: Behaviour;
  seed: number;
  clock: Clock;
  keepRequests: number;
  adminPort: number | null;
  instance: number;
  workers: number | null;
  route: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
}

/** 127.0.0.0/8, written as four decimal octets. */
const LOOPBACK_V4 = /^127\.(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){2}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * Validates {@link DoubleOptions} and fills in defaults.
 *
 * @throws InvalidOptionError naming the option (e.g. `host` when it is not a loopback address).
 * @throws InvalidInputError when `behaviour` is invalid.
 */
export function normalizeDoubleOptions(options: DoubleOptions = {}): NormalizedDoubleOptions {
  const host = options.host ?? DEFAULT_DOUBLE_OPTIONS.host;
  if (typeof host !== 'string' || !LOOPBACK_V4.test(host))
    throw new InvalidOptionError(
      'host',
      'an IPv4 loopback address such as "127.0.0.1" (the double binds to loopback only)',
      host,
    );
  const port = options.port ?? DEFAULT_DOUBLE_OPTIONS.port;
  checkPort('port', port);
  const adminPort = options.adminPort ?? DEFAULT_DOUBLE_OPTIONS.adminPort;
  if (adminPort !== null) checkPort('adminPort', adminPort);
  const seed = options.seed ?? DEFAULT_DOUBLE_OPTIONS.seed;
  if (!Number.isInteger(seed)) throw new InvalidOptionError('seed', 'an integer', seed);
  const keepRequests = options.keepRequests ?? DEFAULT_DOUBLE_OPTIONS.keepRequests;
  if (!Number.isInteger(keepRequests) || keepRequests < 0 || keepRequests > 100_000) {
    throw new InvalidOptionError('keepRequests', 'an integer in [0, 100000]', keepRequests);
  }
  const instance = options.instance ?? DEFAULT_DOUBLE_OPTIONS.instance;
  if (!Number.isInteger(instance) || instance < 0) {
    throw new InvalidOptionError('instance', 'a non-negative integer', instance);
  }
  const workers = options.workers ?? DEFAULT_DOUBLE_OPTIONS.workers;
  if (workers !== null && (!Number.isInteger(workers) || workers < 1 || workers > 100_000)) {
    throw new InvalidOptionError('workers', 'null or an integer in [1, 100000]', workers);
  }
  const clock = options.clock ?? systemClock;
  const behaviour = options.behaviour === undefined ? DEFAULT_BEHAVIOUR : parseBehaviour(options.behaviour);
  const route = options.route ?? null;
  if (route !== null && typeof route !== 'function')
    throw new InvalidOptionError('route', 'a function (req, res) => boolean', route);
  return { host, port, behaviour, seed, clock, keepRequests, adminPort, instance, workers, route };
}

function checkPort(option: string, port: unknown): void {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidOptionError(option, 'an integer port in [0, 65535]', port);
  }
}

type ListenMode = 'open' | 'refusing' | 'blackhole';

/**
 * Starts a dependency double: an HTTP server on 127.0.0.1 whose behaviour (latency distribution,
 * status shares, hangs, resets, slow bodies, refused or timing-out connects) can be switched while
 * it runs, with {@link Double.set} or `POST /__double/behaviour`, and which counts what it receives
 * (originals, retries and hedges from the attempt header; requests that arrived after their deadline).
 *
 * The whole request body is read before the response is decided on (except for a reset before
 * headers), so "the server hung after reading the body" is what `hang` means.
 *
 * @throws InvalidOptionError for a bad option; InvalidInputError for a bad behaviour.
 * @example
 * await using double = await startDouble({ behaviour: { statuses: [{ status: 503, share: 0.2 }] }, seed: 7 });
 * await fetch(double.url);
 * double.stats().byStatus; // { '200': 1 } or { '503': 1 }
 * @see docs/lab.md
 */
export async function startDouble(options: DoubleOptions = {}): Promise<Double> {
  const config = normalizeDoubleOptions(options);
  const { clock, host, instance } = config;
  const random: Random = createRandom(config.seed);
  const counter = createStatsCounter(config.keepRequests);
  const workers: WorkerQueue | null = config.workers === null ? null : createWorkerQueue(config.workers);
  let servedForNobody = 0;
  let behaviour = config.behaviour;
  let mode: ListenMode = 'open';
  let closed = false;
  let stopping = false;
  let sequence = 0;
  let listener: NetServer | undefined;
  let blackhole: ConnectBlackhole | undefined;
  let adminServer: Server | undefined;
  /** Every open data socket, with the number of requests it is serving. */
  const sockets = new Map<Socket, number>();
  const timers = new Set<Timer>();
  let transitions: Promise<unknown> = Promise.resolve();

  const schedule = (callback: () => void, ms: number): Timer => {
    const timer = clock.setTimeout(() => {
      timers.delete(timer);
      callback();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const cancel = (timer: Timer) => {
    timers.delete(timer);
    clock.clearTimeout(timer);
  };

  const http = createHttpServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const socket = req.socket;
    sockets.set(socket, (sockets.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const active = (sockets.get(socket) ?? 1) - 1;
      if (sockets.has(socket)) sockets.set(socket, active);
      if (active === 0 && mode !== 'open') socket.destroy();
    });
    req.on('error', () => {});
    if (isAdminPath(req.url)) {
      handleAdmin(req, res);
      return;
    }
    if (mode !== 'open') {
      // A connection opened before the double stopped accepting: a process that went away would
      // have reset it, so do the same.
      counter.fault('droppedWhileRefusing');
      socket.destroy();
      return;
    }
    if (config.route?.(req, res)) return;
    handleData(req, res);
  });

  function handleData(req: IncomingMessage, res: ServerResponse): void {
    const arrivedAt = clock.now();
    counter.arrive(req, arrivedAt);
    const requestTimers = new Set<Timer>();
    res.once('close', () => {
      for (const timer of requestTimers) cancel(timer);
      counter.leave();
    });
    const current = behaviour;
    const outcome = pickOutcome(current, random());
    if (outcome.kind === 'resetBeforeHeaders') {
      counter.fault('resetBeforeHeaders');
      req.socket.destroy();
      return;
    }
    // With workers the service time is drawn when a worker takes the request up (see `serve`).
    const delayMs = workers === null ? sampleLatencyMs(current.latency, random) : 0;
    const seq = ++sequence;
    req.on('end', () => {
      if (outcome.kind === 'hang') {
        // Hold the socket: nothing is scheduled, so only the client or close() ends it.
        counter.fault('hang');
        return;
      }
      if (workers !== null) {
        serve(workers, res, outcome, seq, requestTimers);
        return;
      }
      const waitMs = Math.max(0, arrivedAt + delayMs + afterServiceMs(current, random) - clock.now());
      const timer = schedule(() => {
        requestTimers.delete(timer);
        respond(res, outcome, current, seq, requestTimers);
      }, waitMs);
      requestTimers.add(timer);
    });
    req.resume();
  }

  /**
   * Finite capacity: the request waits for a worker, then holds it for its service time — drawn from
   * the latency of the behaviour in force when the worker takes it up — answered or not: a caller who
   * has gone does not give the worker back any sooner.
   */
  function serve(
    queue: WorkerQueue,
    res: ServerResponse,
    outcome: Outcome,
    seq: number,
    requestTimers: Set<Timer>,
  ): void {
    queue.submit((done) => {
      if (closed) {
        done();
        return;
      }
      const current = behaviour;
      const serviceMs = sampleLatencyMs(current.latency, random);
      schedule(() => {
        done();
        if (res.destroyed || res.writableEnded) {
          servedForNobody++;
          return;
        }
        // The answer then waits on I/O and travels for `wireDelayMs`, holding no worker.
        const afterMs = afterServiceMs(current, random);
        if (afterMs <= 0) {
          respond(res, outcome, current, seq, requestTimers);
          return;
        }
        const timer = schedule(() => {
          requestTimers.delete(timer);
          respond(res, outcome, current, seq, requestTimers);
        }, afterMs);
        requestTimers.add(timer);
      }, serviceMs);
    });
  }

  function respond(
    res: ServerResponse,
    outcome: Outcome,
    current: Behaviour,
    seq: number,
    requestTimers: Set<Timer>,
  ): void {
    const status = outcome.kind === 'status' ? outcome.status : 200;
    // 204 and 304 never carry a body (RFC 9110 §15.3.5, §15.4.5).
    const bodiless = status === 204 || status === 304;
    const body = bodiless ? Buffer.alloc(0) : responseBody(instance, seq, status, current.bodyBytes);
    if (!bodiless) {
      res.setHeader('content-type', 'application/json');
      res.setHeader('content-length', body.length);
    }
    res.setHeader('x-double-instance', String(instance));
    if (outcome.kind === 'status' && outcome.retryAfter !== null)
      res.setHeader('retry-after', outcome.retryAfter);
    if (mode !== 'open') res.setHeader('connection', 'close');
    res.writeHead(status);
    counter.status(status);
    if (outcome.kind === 'resetMidBody' && !bodiless) {
      counter.fault('resetMidBody');
      const half = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
      // Destroy only once the first half has reached the kernel, so the client sees part of it.
      res.write(half, () => res.socket?.destroy());
      return;
    }
    if (current.slowBodyMs <= 0 || bodiless) {
      res.end(body);
      return;
    }
    const chunks = Math.min(SLOW_BODY_CHUNKS, body.length);
    const size = Math.ceil(body.length / chunks);
    const intervalMs = chunks > 1 ? current.slowBodyMs / (chunks - 1) : current.slowBodyMs;
    let offset = 0;
    const drip = () => {
      const end = Math.min(body.length, offset + size);
      const chunk = body.subarray(offset, end);
      offset = end;
      if (offset >= body.length) {
        res.end(chunk);
        return;
      }
      res.write(chunk);
      const timer = schedule(() => {
        requestTimers.delete(timer);
        drip();
      }, intervalMs);
      requestTimers.add(timer);
    };
    drip();
  }

  function handleAdmin(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    const send = (status: number, value: unknown, extra: Record<string, string> = {}) => {
      const text = `${JSON.stringify(value)}\n`;
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'cache-control': 'no-store',
        ...(mode !== 'open' ? { connection: 'close' } : {}),
        ...extra,
      });
      res.end(text);
    };
    const route = `${req.method} ${path}`;
    if (route === `GET ${ADMIN_PREFIX}/stats`) {
      send(200, counter.snapshot());
      return;
    }
    if (route === `GET ${ADMIN_PREFIX}/behaviour`) {
      send(200, behaviour);
      return;
    }
    if (route === `POST ${ADMIN_PREFIX}/reset`) {
      req.resume();
      counter.reset();
      send(200, counter.snapshot());
      return;
    }
    if (route === `POST ${ADMIN_PREFIX}/behaviour`) {
      readAdminBody(req, (text) => {
        if (text === undefined) {
          send(413, {
            error: {
              code: 'INVALID_INPUT',
              message: `behaviour: body larger than ${MAX_ADMIN_BODY_BYTES} bytes.`,
            },
          });
          return;
        }
        let parsed: Behaviour;
        try {
          parsed = parseBehaviourJson(text);
        } catch (error) {
          const known = isPrazoError(error);
          send(known ? 400 : 500, {
            error: { code: known ? error.code : 'DOUBLE_ERROR', message: String((error as Error)?.message) },
          });
          return;
        }
        // This socket is busy, so a switch to refusing spares it; the reply then carries
        // `connection: close`.
        apply(parsed).then(
          () => send(200, behaviour),
          (error: unknown) =>
            send(500, {
              error: {
                code: 'DOUBLE_ERROR',
                message: error instanceof Error ? error.message : String(error),
              },
            }),
        );
      });
      return;
    }
    const known = ['stats', 'behaviour', 'reset'].map((name) => `${ADMIN_PREFIX}/${name}`);
    if (known.includes(path ?? '')) {
      req.resume();
      send(
        405,
        { error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method} not allowed on ${path}.` } },
        {
          allow:
            path === `${ADMIN_PREFIX}/stats`
              ? 'GET'
              : path === `${ADMIN_PREFIX}/reset`
                ? 'POST'
                : 'GET, POST',
        },
      );
      return;
    }
    req.resume();
    send(404, {
      error: { code: 'NOT_FOUND', message: `No admin route ${path}; try GET ${ADMIN_PREFIX}/stats.` },
    });
  }

  async function listen(port: number): Promise<number> {
    const server = createNetServer({ noDelay: true }, (socket) => {
      if (closed) {
        socket.destroy();
        return;
      }
      sockets.set(socket, 0);
      socket.once('close', () => sockets.delete(socket));
      http.emit('connection', socket);
    });
    const bind = () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    for (let tries = 1; ; tries++) {
      try {
        await bind();
        break;
      } catch (error) {
        const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (port === 0 || !inUse || tries >= RELISTEN_TRIES || closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, RELISTEN_PAUSE_MS));
      }
    }
    server.on('error', () => {});
    listener = server;
    return (server.address() as { port: number }).port;
  }

  async function stopListening(): Promise<void> {
    listener?.close();
    listener = undefined;
    // Idle keep-alive connections would let clients skip the refused connect: end them, as a
    // process that went away would.
    const ended: Promise<void>[] = [];
    for (const [socket, active] of sockets) {
      if (active !== 0) continue;
      ended.push(new Promise((resolve) => socket.once('close', () => resolve())));
      socket.destroy();
    }
    if (ended.length === 0) return;
    await Promise.all(ended);
    // Give a client (often in this very process) a moment to read the FIN, so its next request
    // opens a new connection and meets the refusal instead of writing into a dead socket.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }

  const port = await listen(config.port);

  async function transition(target: ListenMode): Promise<void> {
    if (stopping || target === mode) return;
    if (mode === 'open') await stopListening();
    if (mode === 'blackhole') {
      await blackhole?.close();
      blackhole = undefined;
    }
    mode = target;
    try {
      if (target === 'open') await listen(port);
      else if (target === 'blackhole') blackhole = await blackholeOn(host, port);
    } catch (error) {
      // The port could not be taken back (another process grabbed it): nothing listens, which is
      // refusing; a later set() tries again.
      mode = 'refusing';
      throw error;
    }
  }

  function apply(next: Behaviour): Promise<Behaviour> {
    const run = async () => {
      behaviour = next;
      await transition(next.refuse ? 'refusing' : next.connectTimeout ? 'blackhole' : 'open');
      return next;
    };
    const result = transitions.then(run, run);
    transitions = result.catch(() => {});
    return result;
  }

  if (config.adminPort !== null) {
    adminServer = createHttpServer((req, res) => {
      req.on('error', () => {});
      if (isAdminPath(req.url)) handleAdmin(req, res);
      else {
        req.resume();
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`Admin only: ${ADMIN_PREFIX}/stats\n`);
      }
    });
    const admin = adminServer;
    await new Promise<void>((resolve, reject) => {
      admin.once('error', reject);
      admin.listen({ host, port: config.adminPort ?? 0 }, () => {
        admin.off('error', reject);
        resolve();
      });
    });
  }

  const url = `http://${host}:${port}`;
  const adminUrl = adminServer
    ? `http://${host}:${(adminServer.address() as { port: number }).port}${ADMIN_PREFIX}`
    : `${url}${ADMIN_PREFIX}`;

  if (behaviour.refuse || behaviour.connectTimeout) await apply(behaviour);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // No new listener or worker from here on; a switch already under way completes first.
      stopping = true;
      await transitions;
      closed = true;
      const server = listener;
      listener = undefined;
      const listenerClosed = server
        ? new Promise<void>((resolve) => server.close(() => resolve()))
        : undefined;
      await blackhole?.close();
      blackhole = undefined;
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
      workers?.clear();
      for (const socket of sockets.keys()) socket.destroy();
      const admin = adminServer;
      const adminClosed = admin ? new Promise<void>((resolve) => admin.close(() => resolve())) : undefined;
      admin?.closeAllConnections();
      await Promise.all([listenerClosed, adminClosed]);
      // 'close' events fire before libuv runs the handles' close callbacks (the loop's last
      // phase); two turns of the loop later the handles are really gone.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    })();
    return closing;
  };

  return {
    url,
    port,
    adminUrl,
    instance,
    behaviour: () => behaviour,
    set: (input) => apply(parseBehaviour(input)),
    stats: () => counter.snapshot(),
    queue: () =>
      workers === null
        ? null
        : {
            workers: workers.stats().workers,
            busy: workers.stats().busy,
            waiting: workers.stats().waiting,
            peakWaiting: workers.takePeakWaiting(),
            servedForNobody,
          },
    reset: () => counter.reset(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function isAdminPath(url: string | undefined): boolean {
  return url !== undefined && (url === ADMIN_PREFIX || url.startsWith(`${ADMIN_PREFIX}/`));
}

function readAdminBody(req: IncomingMessage, done: (text: string | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_ADMIN_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  });
  req.on('end', () => done(tooLarge ? undefined : Buffer.concat(chunks).toString('utf8')));
}

function responseBody(instance: number, seq: number, status: number, bodyBytes: number): Buffer {
  const json = JSON.stringify({ instance, request: seq, status });
  // Trailing spaces keep the body valid JSON at any requested size.
  return Buffer.from(json.length >= bodyBytes ? json : json.padEnd(bodyBytes, ' '));
}

/** Tries to take back a port just released, at most this many times, this far apart (ms). */
const REBIND_TRIES = 10;
const REBIND_PAUSE_MS = 25;

/**
 * Starts a connect blackhole on the port the double's server has just released. The port may be
 * held a moment longer (a connection of that server still closing: seen once on a busy CI machine as
 * `EADDRINUSE`), so an `EADDRINUSE` is retried a few times before it is reported.
 */
async function blackholeOn(host: string, port: number): Promise<ConnectBlackhole> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startConnectBlackhole(host, port);
    } catch (error) {
      if (attempt >= REBIND_TRIES || !String((error as Error).message).includes('EADDRINUSE')) throw error;
      await new Promise((resolve) => setTimeout(resolve, REBIND_PAUSE_MS));
    }
  }
}
