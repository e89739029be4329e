import { InvalidInputError } from 'prazo';
import { type LatencyDistribution, MAX_DELAY_MS } from './latency-distribution.js';

/** A share of requests answered with a given status (and, optionally, a `Retry-After`). */
export interface StatusShare {
  /** HTTP status, an integer in [200, 599]. */
  readonly status: number;
  /** Share of requests, in [0, 1]. */
  readonly share: number;
  /** `Retry-After` value sent verbatim (seconds or an HTTP date), or `null` for none. */
  readonly retryAfter: string | null;
}

/**
 * What the double does with each request. Produced by {@link parseBehaviour}; every field is present.
 *
 * Per request the double makes one draw and picks at most one outcome, in this order:
 * reset before headers, hang, each entry of `statuses`, reset mid-body; otherwise 200.
 * The shares of these outcomes add up to at most 1.
 */
export interface Behaviour {
  /** Delay from the request's arrival to the response headers (never before the body is read). */
  readonly latency: LatencyDistribution;
  /** Shares of non-200 answers. @default [] */
  readonly statuses: readonly StatusShare[];
  /** Share of requests never answered: the socket is held until the client or `close()` ends it. @default 0 */
  readonly hang: number;
  /** Share of requests whose socket is destroyed on arrival, before the body is read. @default 0 */
  readonly resetBeforeHeaders: number;
  /** Share of requests answered 200 with headers and half the body, then the socket destroyed. @default 0 */
  readonly resetMidBody: number;
  /** Time over which the body drips out in small chunks after the headers. Unit: ms. @default 0 */
  readonly slowBodyMs: number;
  /**
   * Time added to every answer that holds none of the double's workers: the network between the
   * caller and a distant instance. Without workers it simply adds to the latency. Unit: ms. @default 0
   */
  readonly wireDelayMs: number;
  /**
   * A share of the requests that, once served, wait `ms` more before their answer, holding none of
   * the double's workers: an I/O wait (a cold cache's backing store, a retransmitted packet) — one
   * caller's answer is slow while the instance serves the others as before. @default { share: 0, ms: 0 }
   */
  readonly ioWait: IoWait;
  /** Size of the response body in bytes (a JSON object padded with spaces; never smaller than it). @default 64 */
  readonly bodyBytes: number;
  /** Stop listening: connects get ECONNREFUSED until switched back (same port). @default false */
  readonly refuse: boolean;
  /**
   * Stop accepting in a way that makes new connects time out (the listening queue is full, so the
   * kernel drops the handshake). @default false
   */
  readonly connectTimeout: boolean;
}

/** A share of the requests that wait `ms` more for their answer, holding no worker. */
export interface IoWait {
  /** Share of the requests, in [0, 1]. */
  readonly share: number;
  /** How much later they are answered. Unit: ms. */
  readonly ms: number;
}

/** A share given as a number in [0, 1], or a boolean (`true` = every request). */
export type ShareInput = number | boolean;

/** What {@link parseBehaviour} accepts (JSON-able). Missing fields take {@link DEFAULT_BEHAVIOUR}. */
export interface BehaviourInput {
  latency?: LatencyDistribution;
  /** Shorthand for `latency: { type: 'fixed', ms: answerAtMs }`; exclusive with `latency`. */
  answerAtMs?: number;
  statuses?: ReadonlyArray<{ status: number; share: number; retryAfter?: string | number | null }>;
  hang?: ShareInput;
  resetBeforeHeaders?: ShareInput;
  resetMidBody?: ShareInput;
  slowBodyMs?: number;
  wireDelayMs?: number;
  ioWait?: { share: number; ms: number };
  bodyBytes?: number;
  refuse?: boolean;
  connectTimeout?: boolean;
}

/** The healthy double: answers 200 at once. */
export const DEFAULT_BEHAVIOUR: Behaviour = Object.freeze({
  latency: Object.freeze({ type: 'fixed', ms: 0 }),
  statuses: Object.freeze([]),
  hang: 0,
  resetBeforeHeaders: 0,
  resetMidBody: 0,
  slowBodyMs: 0,
  wireDelayMs: 0,
  ioWait: Object.freeze({ share: 0, ms: 0 }),
  bodyBytes: 64,
  refuse: false,
  connectTimeout: false,
});

/** Largest accepted body: 1 MiB. */
export const MAX_BODY_BYTES = 1_048_576;
const MAX_STATUSES = 32;
const MAX_DISTRIBUTION_DEPTH = 4;
/** Rounding slack when shares are summed (0.1 + 0.2 + 0.7 must pass). */
const SHARE_EPSILON = 1e-9;

const KEYS = new Set([
  'latency',
  'answerAtMs',
  'statuses',
  'hang',
  'resetBeforeHeaders',
  'resetMidBody',
  'slowBodyMs',
  'wireDelayMs',
  'ioWait',
  'bodyBytes',
  'refuse',
  'connectTimeout',
]);

/**
 * Validates and normalises a behaviour (from code, the admin endpoint or the CLI). Every field not
 * given takes its default from {@link DEFAULT_BEHAVIOUR}; the result is frozen.
 *
 * @throws InvalidInputError (code `INVALID_INPUT`) naming the offending field, e.g.
 *   ``behaviour: `statuses[1].share` must be a number in [0, 1], got 2.``
 * @example
 * parseBehaviour({ statuses: [{ status: 503, share: 0.2 }, { status: 429, share: 0.1, retryAfter: '1' }] });
 * parseBehaviour({ latency: { type: 'lognormal', medianMs: 40, p99Ms: 180 } });
 */
export function parseBehaviour(input: unknown): Behaviour {
  const record = asRecord(input, 'behaviour', 'an object');
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key)) fail(`unknown field \`${key}\` (known: ${[...KEYS].join(', ')})`);
  }
  if (record['latency'] !== undefined && record['answerAtMs'] !== undefined) {
    fail('`latency` and `answerAtMs` are exclusive: give one of them');
  }
  const latency =
    record['answerAtMs'] !== undefined
      ? Object.freeze({ type: 'fixed' as const, ms: delay(record['answerAtMs'], 'answerAtMs') })
      : record['latency'] !== undefined
        ? parseDistribution(record['latency'], 'latency', 0)
        : DEFAULT_BEHAVIOUR.latency;
  const statuses = record['statuses'] === undefined ? [] : parseStatuses(record['statuses']);
  const hang = share(record['hang'], 'hang');
  const resetBeforeHeaders = share(record['resetBeforeHeaders'], 'resetBeforeHeaders');
  const resetMidBody = share(record['resetMidBody'], 'resetMidBody');
  const total = statuses.reduce((sum, s) => sum + s.share, hang + resetBeforeHeaders + resetMidBody);
  if (total > 1 + SHARE_EPSILON) {
    fail(
      `the shares of hang, resetBeforeHeaders, resetMidBody and statuses add up to ${round(total)}; they must add up to at most 1`,
    );
  }
  const refuse = flag(record['refuse'], 'refuse');
  const connectTimeout = flag(record['connectTimeout'], 'connectTimeout');
  if (refuse && connectTimeout) fail('`refuse` and `connectTimeout` are exclusive: set at most one');
  return Object.freeze({
    latency,
    statuses: Object.freeze(statuses),
    hang,
    resetBeforeHeaders,
    resetMidBody,
    slowBodyMs: record['slowBodyMs'] === undefined ? 0 : delay(record['slowBodyMs'], 'slowBodyMs'),
    wireDelayMs: record['wireDelayMs'] === undefined ? 0 : delay(record['wireDelayMs'], 'wireDelayMs'),
    ioWait: record['ioWait'] === undefined ? DEFAULT_BEHAVIOUR.ioWait : parseIoWait(record['ioWait']),
    bodyBytes:
      record['bodyBytes'] === undefined
        ? DEFAULT_BEHAVIOUR.bodyBytes
        : integer(record['bodyBytes'], 'bodyBytes', 0, MAX_BODY_BYTES),
    refuse,
    connectTimeout,
  });
}

/**
 * Parses a behaviour given as JSON text (admin endpoint body, `--behaviour` flag).
 *
 * @throws InvalidInputError when the text is not JSON or the behaviour is invalid.
 */
export function parseBehaviourJson(text: string): Behaviour {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    fail(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  return parseBehaviour(value);
}

function parseDistribution(value: unknown, path: string, depth: number): LatencyDistribution {
  if (depth >= MAX_DISTRIBUTION_DEPTH)
    fail(`\`${path}\` nests mixtures deeper than ${MAX_DISTRIBUTION_DEPTH}`);
  const record = asRecord(value, path, 'a latency distribution object');
  const type = record['type'];
  const only = (...keys: string[]) => {
    for (const key of Object.keys(record)) {
      if (key !== 'type' && !keys.includes(key)) fail(`unknown field \`${path}.${key}\` for type ${type}`);
    }
  };
  switch (type) {
    case 'fixed':
      only('ms');
      return Object.freeze({ type, ms: delay(record['ms'], `${path}.ms`) });
    case 'lognormal': {
      only('medianMs', 'p99Ms');
      const medianMs = delay(record['medianMs'], `${path}.medianMs`);
      const p99Ms = delay(record['p99Ms'], `${path}.p99Ms`);
      if (medianMs <= 0) fail(`\`${path}.medianMs\` must be greater than 0, got ${show(medianMs)}`);
      if (p99Ms < medianMs)
        fail(`\`${path}.p99Ms\` (${p99Ms}) must be at least \`${path}.medianMs\` (${medianMs})`);
      return Object.freeze({ type, medianMs, p99Ms });
    }
    case 'mixture':
      only('base', 'tail', 'tailShare');
      return Object.freeze({
        type,
        base: parseDistribution(record['base'], `${path}.base`, depth + 1),
        tail: parseDistribution(record['tail'], `${path}.tail`, depth + 1),
        tailShare: share(record['tailShare'], `${path}.tailShare`, false),
      });
    default:
      return fail(`\`${path}.type\` must be "fixed", "lognormal" or "mixture", got ${show(type)}`);
  }
}

function parseStatuses(value: unknown): StatusShare[] {
  if (!Array.isArray(value)) fail(`\`statuses\` must be an array, got ${show(value)}`);
  if (value.length > MAX_STATUSES) fail(`\`statuses\` has ${value.length} entries; at most ${MAX_STATUSES}`);
  return value.map((entry: unknown, index) => {
    const path = `statuses[${index}]`;
    const record = asRecord(entry, path, 'an object { status, share, retryAfter? }');
    for (const key of Object.keys(record)) {
      if (key !== 'status' && key !== 'share' && key !== 'retryAfter')
        fail(`unknown field \`${path}.${key}\``);
    }
    return Object.freeze({
      status: integer(record['status'], `${path}.status`, 200, 599),
      share: share(record['share'], `${path}.share`, false),
      retryAfter: retryAfter(record['retryAfter'], `${path}.retryAfter`),
    });
  });
}

function retryAfter(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return String(integer(value, path, 0, 31_536_000));
  // Sent verbatim so a client's Retry-After parser can be fed odd values, but it must stay a legal
  // header value (no control characters, no line breaks).
  if (typeof value !== 'string' || value.length > 256 || !/^[\x20-\x7e]*$/.test(value)) {
    fail(
      `\`${path}\` must be a number of seconds or a printable ASCII string (≤ 256 chars), got ${show(value)}`,
    );
  }
  return value;
}

function share(value: unknown, path: string, booleans = true): number {
  if (value === undefined) return 0;
  if (booleans && typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    fail(`\`${path}\` must be a number in [0, 1]${booleans ? ' or a boolean' : ''}, got ${show(value)}`);
  }
  // -0 is a valid share of nothing; normalise it so a behaviour survives a JSON round trip unchanged.
  return value === 0 ? 0 : value;
}

function parseIoWait(value: unknown): IoWait {
  const record = asRecord(value, 'ioWait', 'an object { share, ms }');
  for (const key of Object.keys(record)) {
    if (key !== 'share' && key !== 'ms') fail(`unknown field \`ioWait.${key}\` (known: share, ms)`);
  }
  if (record['share'] === undefined || record['ms'] === undefined)
    fail('`ioWait` needs both `share` and `ms`');
  return Object.freeze({
    share: share(record['share'], 'ioWait.share', false),
    ms: delay(record['ms'], 'ioWait.ms'),
  });
}

/** How long after its service a request drawn `u` (uniform in [0, 1)) waits on I/O, ms. */
export function ioWaitMs(behaviour: Behaviour, u: number): number {
  return u < behaviour.ioWait.share ? behaviour.ioWait.ms : 0;
}

/**
 * What a request waits after its service, holding no worker: its I/O wait and the wire. `random`
 * is drawn once, and only when the behaviour has an I/O wait, so that the draws of every other
 * behaviour stay as they were.
 */
export function afterServiceMs(behaviour: Behaviour, random: () => number): number {
  const io = behaviour.ioWait.share > 0 ? ioWaitMs(behaviour, random()) : 0;
  return io + behaviour.wireDelayMs;
}

function flag(value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') fail(`\`${path}\` must be a boolean, got ${show(value)}`);
  return value;
}

function delay(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_DELAY_MS) {
    fail(`\`${path}\` must be a number of milliseconds in [0, ${MAX_DELAY_MS}], got ${show(value)}`);
  }
  return value === 0 ? 0 : value; // -0 → 0, as for shares
}

function integer(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(`\`${path}\` must be an integer in [${min}, ${max}], got ${show(value)}`);
  }
  return value;
}

function asRecord(value: unknown, path: string, expected: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(`\`${path}\` must be ${expected}, got ${show(value)}`);
  }
  return value as Record<string, unknown>;
}

function fail(message: string): never {
  throw new InvalidInputError(`${message}.`, { source: 'behaviour' });
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  let text: string;
  try {
    text =
      typeof value === 'number' && !Number.isFinite(value) ? String(value) : String(JSON.stringify(value));
  } catch {
    text = typeof value;
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** What the double does with one request, picked by {@link pickOutcome}. */
export type Outcome =
  | { readonly kind: 'resetBeforeHeaders' }
  | { readonly kind: 'hang' }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter: string | null }
  | { readonly kind: 'resetMidBody' }
  | { readonly kind: 'ok' };

const OK: Outcome = Object.freeze({ kind: 'ok' });
const RESET_BEFORE_HEADERS: Outcome = Object.freeze({ kind: 'resetBeforeHeaders' });
const HANG: Outcome = Object.freeze({ kind: 'hang' });
const RESET_MID_BODY: Outcome = Object.freeze({ kind: 'resetMidBody' });

/**
 * Picks the outcome of one request from a uniform draw `u` in [0, 1): the shares are laid end to end
 * in the order reset before headers, hang, `statuses` (in their order), reset mid-body; what is left
 * is a plain 200.
 *
 * @example
 * pickOutcome(parseBehaviour({ statuses: [{ status: 503, share: 0.2 }] }), 0.1); // { kind: 'status', status: 503, … }
 */
export function pickOutcome(behaviour: Behaviour, u: number): Outcome {
  let edge = behaviour.resetBeforeHeaders;
  if (u < edge) return RESET_BEFORE_HEADERS;
  edge += behaviour.hang;
  if (u < edge) return HANG;
  for (const entry of behaviour.statuses) {
    edge += entry.share;
    if (u < edge) return { kind: 'status', status: entry.status, retryAfter: entry.retryAfter };
  }
  edge += behaviour.resetMidBody;
  if (u < edge) return RESET_MID_BODY;
  return OK;
}
