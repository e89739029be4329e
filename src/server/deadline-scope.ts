import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, systemClock } from '../clock.js';
import {
  cancelDeadline,
  checkClock,
  Deadline,
  onDeadlineExpired,
  readIncomingDeadlineWith,
} from '../deadline/deadline.js';
import { HopTally, withHopTally } from '../deadline/hop-tally.js';
import { CancelledError, InvalidOptionError, isPrazoError, type PrazoError } from '../errors.js';
import { normalizeDeadlineHeaderOptions } from '../wire/deadline-header.js';
import { SERVER_TIMING_HEADER } from '../wire/server-timing.js';
import type { ServerTrust } from './trust.js';

/**
 * Options shared by the server adapters (`prazo/http`, `prazo/express`, `prazo/fastify`). `R` is the
 * request the adapter hands to a `trust` predicate.
 */
export interface ServerDeadlineOptions<R = IncomingMessage> {
  /** Time granted to a request that carries no usable deadline, in ms (held to `maxMs`). */
  defaultMs: number;
  /** The longest this service holds a request, in ms: later incoming limits are capped here. */
  maxMs: number;
  /**
   * Clock-skew allowance, in ms: a request whose absolute limit passed less than `skewMs` ago is still
   * accepted, and prazo's own 504 waits until the limit + `skewMs`. The deadline the handler sees and
   * passes on (`req.deadline`, the ambient deadline, `x-deadline-epoch-ms`) never includes it.
   * @default 0
   */
  skewMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /**
   * Called once per request whose handler writes to the response (`res.json`, `res.setHeader`,
   * `res.end` …) after prazo already answered 504 at the deadline. The late write is dropped quietly
   * (no `ERR_HTTP_HEADERS_SENT`); count it here. `prazo/express` and `prazo/http` also count it in
   * `lateWrites` on what they return.
   * @default undefined
   */
  onLateWrite?: (req: IncomingMessage) => void;
  /**
   * Whose `x-deadline-epoch-ms` / `grpc-timeout` and `x-criticality` this service accepts: `'all'`
   * (behind an edge that removes or sets these headers), `'none'` (an edge), a predicate on the
   * request (`(req) => req.socket.remoteAddress === '10.0.0.5'`), or one of those per header
   * (`{ deadline: 'all', criticality: isMeshPeer }`). What is not trusted is treated as absent — the
   * deadline is now + `defaultMs`, the criticality `default` — and removed from `req.headers`.
   * Without the option nothing is trusted, and the first header ignored is reported once with a
   * `PRAZO_UNTRUSTED_HEADER` process warning. See SECURITY.md, "Trust boundary".
   * @default 'none'
   */
  trust?: ServerTrust<R>;
  /**
   * The `Server-Timing` header prazo adds to every response (docs/deadlines.md, "Server-Timing"):
   * the time left on arrival, queued for admission, in the handler, and — with the chain — the time
   * the handler waited on each of its prazo dependencies and what they said of themselves.
   * `'trusted'`: the chain to callers whose deadline header `trust` accepts (the mesh), only this
   * hop's own three metrics to the others (no dependency names leave through an edge); `'all'`: the
   * chain to every caller; `'own'`: the three metrics to every caller; `'none'`: no header.
   * @default 'trusted'
   */
  serverTiming?: ServerTimingPolicy;
}

/** Who gets which `Server-Timing` (see {@link ServerDeadlineOptions.serverTiming}). */
export type ServerTimingPolicy = 'trusted' | 'all' | 'own' | 'none';

/** {@link ServerDeadlineOptions} validated, with defaults applied. */
export interface NormalizedServerDeadlineOptions {
  defaultMs: number;
  maxMs: number;
  skewMs: number;
  clock: Clock;
  onLateWrite: ((req: IncomingMessage) => void) | undefined;
  serverTiming: ServerTimingPolicy;
}

/**
 * Validates the adapters' options once, at setup time.
 * @throws {@link InvalidOptionError} naming the option.
 */
export function normalizeServerDeadlineOptions(
  options: ServerDeadlineOptions<never>,
): NormalizedServerDeadlineOptions {
  const header = normalizeDeadlineHeaderOptions(options);
  const clock = checkClock(options.clock ?? systemClock);
  const onLateWrite = options.onLateWrite;
  if (onLateWrite !== undefined && typeof onLateWrite !== 'function')
    throw new InvalidOptionError('onLateWrite', 'a function', onLateWrite);
  const serverTiming = options.serverTiming ?? 'trusted';
  if (
    serverTiming !== 'trusted' &&
    serverTiming !== 'all' &&
    serverTiming !== 'own' &&
    serverTiming !== 'none'
  )
    throw new InvalidOptionError('serverTiming', "'trusted', 'all', 'own' or 'none'", serverTiming);
  return { ...header, clock, onLateWrite, serverTiming };
}

/**
 * Makes `options.onLateWrite` count too, and returns a reader of the count (the `lateWrites` the
 * adapters expose).
 * @internal
 */
export function countLateWrites(options: NormalizedServerDeadlineOptions): () => number {
  let count = 0;
  const user = options.onLateWrite;
  options.onLateWrite = (req) => {
    count++;
    user?.(req);
  };
  return () => count;
}

/** What an untrusted request's deadline is read from: nothing, so it gets the local default. */
const NO_HEADERS: Readonly<Record<string, undefined>> = Object.freeze({});

/** HTTP status the adapters answer when the deadline is gone. */
export const DEADLINE_STATUS = 504;

/** The JSON body of a deadline response: `{ error: { code, message, … } }`. */
export function deadlineErrorBody(error: PrazoError): { error: Record<string, unknown> } {
  const body: Record<string, unknown> = { code: error.code, message: error.message };
  for (const key of ['dependency', 'remainingMs', 'requiredMs'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (value !== undefined) body[key] = value;
  }
  return { error: body };
}

/**
 * True for the errors a server should answer with 504: the deadline ran out or cannot hold a call.
 * It looks at `error` itself; {@link findDeadlineError} also looks into its `cause` chain (what
 * `fetch` and SDKs wrap prazo's errors in).
 */
export function isDeadlineError(error: unknown): error is PrazoError {
  return isPrazoError(error, 'DEADLINE_EXCEEDED') || isPrazoError(error, 'DEADLINE_INSUFFICIENT');
}

/** How deep {@link findDeadlineError} follows `cause`: real wrappers nest one to three levels. */
export const MAX_CAUSE_DEPTH = 8;

/**
 * The `DEADLINE_EXCEEDED` / `DEADLINE_INSUFFICIENT` error that `error` is or wraps: `fetch` (prazo's
 * `dependency().fetch`, or the global `fetch` after `install()`) rejects with a `TypeError` whose
 * `cause` is prazo's error, axios with an `AxiosError` whose `cause` is, and so on. Follows `cause`
 * at most {@link MAX_CAUSE_DEPTH} levels, stops at a cycle, and never throws (a getter or proxy that
 * throws ends the walk).
 * @returns the prazo error, or `undefined` when the chain holds none.
 * @example
 * const deadline = findDeadlineError(error);
 * if (deadline) reply.code(504).send(deadlineErrorBody(deadline));
 */
export function findDeadlineError(error: unknown): PrazoError | undefined {
  const seen: unknown[] = [];
  let current = error;
  try {
    for (let depth = 0; depth <= MAX_CAUSE_DEPTH; depth++) {
      if (isDeadlineError(current)) return current;
      if (typeof current !== 'object' || current === null || seen.includes(current)) return undefined;
      seen.push(current);
      current = (current as { cause?: unknown }).cause;
    }
  } catch {
    // A getter or a proxy trap that throws: whatever it hides is not a deadline error we can answer.
  }
  return undefined;
}

/** A request's deadline and what the adapter must do with it. */
export type DeadlineScope =
  /** The request arrived after its limit: answer 504 at once, do not run the handler. */
  | {
      readonly expired: true;
      readonly deadline: Deadline;
      readonly hop: HopTally | undefined;
      readonly arrivalMs: number;
    }
  /** Run the handler; everything armed is released when the response ends or the client goes away. */
  | {
      readonly expired: false;
      readonly deadline: Deadline;
      /** When the request arrived: epoch ms of the options' clock (the deadline's). */
      readonly arrivalMs: number;
      /**
       * Where the request's time goes (undefined with `serverTiming: 'none'`): run the handler
       * inside {@link runInScope}, and call {@link handlerStarted} when admission lets it through.
       */
      readonly hop: HopTally | undefined;
      release(): void;
      /**
       * Calls `then` once when the scope is released (the response finished, `true`, or the connection
       * closed first, `false`): an admission slot rides on the scope's own listeners.
       */
      onRelease(then: (finished: boolean) => void): void;
    };

/**
 * Reads the request's deadline (the local default when `trusted` is false) and, unless it has already passed (by more than the skew allowance),
 * arms its signal: when the limit is reached the signal aborts (`DEADLINE_EXCEEDED`); when the limit
 * plus the skew allowance is reached `onExpire` is called if nothing was sent yet; when the client
 * disconnects first the signal aborts with `CANCELLED`. The timers and listeners are released when the
 * response finishes or the connection closes, whichever comes first.
 * @internal Shared by the adapters.
 */
export function openDeadlineScope(
  req: IncomingMessage,
  res: ServerResponse,
  options: NormalizedServerDeadlineOptions,
  trusted: boolean,
  onExpire: (error: PrazoError) => void,
): DeadlineScope {
  const { deadline, arrivalLimitMs } = readIncomingDeadlineWith(
    trusted ? req.headers : NO_HEADERS,
    options,
    options.clock,
  );
  const arrivalMs = options.clock.now();
  const hop =
    options.serverTiming === 'none'
      ? undefined
      : new HopTally(options.clock, arrivalMs, deadline.limitMs - arrivalMs);
  if (hop !== undefined)
    answerWithServerTiming(
      res,
      hop,
      options.serverTiming === 'all' || (options.serverTiming === 'trusted' && trusted),
      options.clock,
    );
  if (arrivalMs >= arrivalLimitMs) return { expired: true, deadline, hop, arrivalMs };
  // Skew excuses the arrival and prazo's own 504, never the deadline the handler passes on.
  const answerBy = arrivalLimitMs > deadline.limitMs ? Deadline.at(arrivalLimitMs, options.clock) : deadline;

  let released = false;
  let then: ((finished: boolean) => void) | undefined;
  const release = (): void => {
    if (released) return;
    released = true;
    then?.(res.writableFinished);
    deadline.dispose();
    answerBy.dispose();
    res.off('finish', release);
    res.off('close', onClose);
  };
  const onLimit = (reason: PrazoError): void => {
    if (res.headersSent || res.writableEnded) return;
    // A handler that keeps writing after this answer must not crash the process with
    // ERR_STREAM_WRITE_AFTER_END: its late writes are discarded.
    res.on('error', ignore);
    onExpire(reason);
    if (res.headersSent) dropLateWrites(req, res, options.onLateWrite);
  };
  const onClose = (): void => {
    if (!res.writableFinished && (res as { [RUNS_ON]?: true })[RUNS_ON] !== true) {
      const reason = new CancelledError('The client disconnected before the response was sent.');
      cancelDeadline(deadline, reason);
      if (answerBy !== deadline) cancelDeadline(answerBy, reason);
    }
    release();
  };

  // At the limit (plus the skew allowance) prazo answers first, then the signal the handler may have
  // taken aborts; no signal is made for a handler that never reads one.
  onDeadlineExpired(answerBy, onLimit);
  res.once('finish', release);
  res.once('close', onClose);
  return {
    expired: false,
    deadline,
    arrivalMs,
    hop,
    release,
    onRelease(callback) {
      if (released) callback(res.writableFinished);
      else then = callback;
    },
  };
}

/**
 * Marks a response whose handler is not cancelled when the client disconnects (see
 * {@link runOnAfterDisconnect}): a property of that one response, not a WeakSet, whose ephemeron
 * entries cost the collector on every keyed request.
 */
const RUNS_ON = Symbol('prazo.runsOnAfterDisconnect');

/**
 * The handler of `res` runs on when its client disconnects: its deadline's signal then aborts at the
 * limit only, not with `CANCELLED`. For the first execution of a request with an idempotency key: its
 * client will ask again with the same key for the answer of the execution it started (a retry after
 * a read timeout waits for it), so that answer must not be a cancellation.
 * @internal Used by the idempotency layer.
 */
export function runOnAfterDisconnect(res: ServerResponse): void {
  (res as ServerResponse & { [RUNS_ON]?: true })[RUNS_ON] = true;
}

/** One scope's part of a response's Server-Timing, and the part of a scope opened before it on the response. */
class TimingLayer {
  readonly hop: HopTally;
  readonly chain: boolean;
  readonly clock: Clock;
  readonly inner: TimingLayer | undefined;

  constructor(hop: HopTally, chain: boolean, clock: Clock, inner: TimingLayer | undefined) {
    this.hop = hop;
    this.chain = chain;
    this.clock = clock;
    this.inner = inner;
  }
}

/**
 * A response's Server-Timing: the hop tally of its latest scope (also for the admission step that
 * lets the request through), the layers that write the header, and the `writeHead` they wrap. One
 * object per response, on the response itself under {@link TIMING}, read by the same module-level
 * `writeHead` on every response: no closure per request, and no WeakMap entry (whose ephemeron the
 * collector pays for).
 */
class ResponseTiming {
  hop: HopTally;
  /** The latest scope's layer first, as a wrapper installed last runs first. */
  layers: TimingLayer;
  readonly writeHead: (...args: unknown[]) => unknown;

  constructor(layer: TimingLayer, writeHead: (...args: unknown[]) => unknown) {
    this.hop = layer.hop;
    this.layers = layer;
    this.writeHead = writeHead;
  }
}

/** Where a response keeps its {@link ResponseTiming} (an own property of that one response). */
const TIMING = Symbol('prazo.serverTiming');
type TimedResponse = ServerResponse & { [TIMING]?: ResponseTiming };

/**
 * Whether prazo sets a header on `res` (its `Server-Timing`) in `writeHead`, before Node's own runs:
 * then the headers a handler gives to `writeHead` always join those set on the response (Node
 * merges them when any is set), so `getHeaderNames()` and `getHeader()` see them once it was called.
 * @internal Used by the idempotency layer's response capture.
 */
export function setsHeaderAtWriteHead(res: ServerResponse): boolean {
  return (res as TimedResponse)[TIMING] !== undefined;
}

/**
 * Adds the hop's `Server-Timing` when the response headers go out: `writeHead` is where both an
 * explicit `writeHead()` and the implicit one of a first `write()` / `end()` pass. A value the
 * handler set with `setHeader('server-timing', …)` is kept, prazo's metrics after it.
 */
function answerWithServerTiming(res: ServerResponse, hop: HopTally, chain: boolean, clock: Clock): void {
  const timed = res as TimedResponse;
  const existing = timed[TIMING];
  if (existing === undefined) {
    timed[TIMING] = new ResponseTiming(
      new TimingLayer(hop, chain, clock, undefined),
      res.writeHead as (...args: unknown[]) => unknown,
    );
    res.writeHead = timedWriteHead as typeof res.writeHead;
    return;
  }
  // A second scope on one response (rare): its part is written before the first's, as a wrapper
  // installed after it would. Someone else's wrapper in between keeps the order of the calls: then
  // this scope wraps with a function of its own.
  existing.hop = hop;
  if (res.writeHead === timedWriteHead) {
    existing.layers = new TimingLayer(hop, chain, clock, existing.layers);
    return;
  }
  const layer = new TimingLayer(hop, chain, clock, undefined);
  const writeHead = res.writeHead as (...args: unknown[]) => unknown;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!this.headersSent) addServerTiming(this, layer);
    return writeHead.apply(this, args);
  } as typeof res.writeHead;
}

function timedWriteHead(this: TimedResponse, ...args: unknown[]): unknown {
  const timing = this[TIMING];
  // Called on another object than the response it was installed on: that object's own, as is.
  if (timing === undefined)
    return (Object.getPrototypeOf(this) as { writeHead: (...a: unknown[]) => unknown }).writeHead.apply(
      this,
      args,
    );
  if (!this.headersSent)
    for (let layer: TimingLayer | undefined = timing.layers; layer !== undefined; layer = layer.inner)
      addServerTiming(this, layer);
  return timing.writeHead.apply(this, args);
}

function addServerTiming(res: ServerResponse, layer: TimingLayer): void {
  const ours = layer.hop.header(layer.clock.now(), layer.chain);
  const theirs = res.getHeader(SERVER_TIMING_HEADER);
  res.setHeader(SERVER_TIMING_HEADER, theirs === undefined ? ours : `${String(theirs)}, ${ours}`);
}

/**
 * The request of `res` reached its handler (admission let it through): its queued time ends now.
 * @internal Used by the adapters' admission.
 */
export function handlerStarted(res: ServerResponse): void {
  (res as TimedResponse)[TIMING]?.hop.handlerStarted();
}

/**
 * Runs `fn` with the request's hop tally as the one prazo's client reports its calls to (as is
 * when there is none).
 * @internal Used by the adapters.
 */
export function runInScope<T>(hop: HopTally | undefined, fn: () => T): T {
  return hop === undefined ? fn() : withHopTally(hop, fn);
}

/** The hop tally of the request `res` answers, if any. @internal */
export function hopTallyOf(res: ServerResponse): HopTally | undefined {
  return (res as TimedResponse)[TIMING]?.hop;
}

/** Writes a 504 JSON response on a raw Node response (used by `prazo/http` and `prazo/express`). */
export function sendDeadlineResponse(res: ServerResponse, error: PrazoError): void {
  if (res.headersSent || res.writableEnded) return;
  const payload = JSON.stringify(deadlineErrorBody(error));
  res.writeHead(DEADLINE_STATUS, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** Responses prazo answered 504 at the deadline while the handler was still running. */
const answeredAtDeadline = new WeakSet<ServerResponse>();

/**
 * True when prazo answered `res` with 504 at the deadline while its handler ran: what the handler
 * does to it afterwards (a write, a deadline error) is expected and dropped.
 * @internal
 */
export function wasAnsweredAtDeadline(res: ServerResponse): boolean {
  return answeredAtDeadline.has(res);
}

/** What a handler may call on a response that prazo already answered; each becomes a no-op. */
const WRITE_METHODS = [
  'setHeader',
  'setHeaders',
  'appendHeader',
  'removeHeader',
  'writeHead',
  'flushHeaders',
  'write',
  'end',
] as const;

/**
 * Turns every later write on `res` into a no-op (own properties shadowing the prototype's): the
 * handler that finishes after the 504 (`res.json(…)` in Express) would otherwise throw
 * `ERR_HTTP_HEADERS_SENT` and end as an error with a stack trace in the log. The first late write
 * calls `onLateWrite`; a callback given to `end`/`write` still runs.
 */
function dropLateWrites(
  req: IncomingMessage,
  res: ServerResponse,
  onLateWrite: ((req: IncomingMessage) => void) | undefined,
): void {
  answeredAtDeadline.add(res);
  let counted = false;
  const drop = function (this: ServerResponse, ...args: unknown[]): unknown {
    if (!counted) {
      counted = true;
      onLateWrite?.(req);
    }
    const callback = args[args.length - 1];
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return this;
  };
  const target = res as unknown as Record<string, unknown>;
  for (const method of WRITE_METHODS) target[method] = drop;
}

function ignore(): void {}
