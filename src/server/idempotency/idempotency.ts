import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, systemClock } from '../../clock.js';
import type { Deadline } from '../../deadline/deadline.js';
import { InvalidOptionError } from '../../errors.js';
import { DEADLINE_HEADER, GRPC_TIMEOUT_HEADER, parseDeadlineHeaderWith } from '../../wire/deadline-header.js';
import { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from '../../wire/idempotency-key-header.js';
import { type HashedKey, hashedKey } from '../../wire/key-hash.js';
import { runOnAfterDisconnect } from '../deadline-scope.js';
import { type BodyTap, tapBody } from './body-tap.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.js';
import {
  createMemoryIdempotencyStore,
  HELD_CLAIMS,
  type HeldClaim,
  type HeldClaims,
  isHeldClaim,
} from './memory-store.js';
import { type CaptureOwner, captureResponse, type ResponseCapture } from './response-capture.js';

/** Options of {@link createIdempotency}. */
export interface IdempotencyOptions {
  /**
   * Where records live: `createMemoryIdempotencyStore()` for one process, `createRedisIdempotencyStore()`
   * for a fleet of replicas. @default a new in-memory store with its default bounds
   */
  store?: IdempotencyStore;
  /** Methods the layer applies to; other requests pass untouched. @default ['POST', 'PATCH', 'PUT', 'DELETE'] */
  methods?: readonly string[];
  /** Answer 400 to a request of those methods that carries no key (the draft's "required" mode). @default false */
  required?: boolean;
  /**
   * A repeat that arrives while the first request with its key still runs:
   * - `'wait'`: it waits for the first to finish, within its own deadline, and gets the first's
   *   response (a hedge or a retry after a read timeout then sees the answer of the execution that
   *   happened); if its deadline passes first, the adapter answers 504 as for any late request;
   * - `'conflict'`: 409 Conflict at once, as the draft says.
   * @default 'wait'
   */
  concurrent?: 'wait' | 'conflict';
  /**
   * How long a record outlives the request's deadline, in ms: covers clock skew between hosts and a
   * caller that retries right at its limit. @default 30000
   */
  graceMs?: number;
  /**
   * Longest life of a record before the grace, in ms: the caller's deadline (`x-deadline-epoch-ms`
   * as received, which may be later than this service's own cap) is held to now + this. @default 600000
   */
  maxLifetimeMs?: number;
  /** Largest response body stored for replay, in bytes; a larger one is not replayed (409). @default 1048576 */
  maxResponseBytes?: number;
  /** Longest wait for one store operation, in ms, before it counts as a store failure. @default 250 */
  storeTimeoutMs?: number;
  /**
   * When the store fails (unreachable, too slow): `'closed'` answers 503 with `Retry-After` and runs
   * nothing; `'open'` runs the request without deduplication. @default 'closed'
   */
  onStoreError?: 'closed' | 'open';
  /** `Retry-After` of the 503 when failing closed, in seconds. @default 1 */
  retryAfterSeconds?: number;
  /**
   * The scope of a key: keys are unique within it. Return the authenticated client (an account or
   * API-key id) so that two clients that chose the same key never meet; never a raw URL or anything
   * unbounded you do not trust. A function that throws puts the request in the unscoped space.
   * @default none: one space for everyone (safe with random keys; see docs/idempotency.md)
   */
  scope?: (req: IncomingMessage) => string;
  /** Called with every store failure (for logs); the count is in `stats().storeErrors`. */
  onStoreFailure?: (error: unknown) => void;
  /** @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link IdempotencyOptions}. */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({
  methods: Object.freeze(['POST', 'PATCH', 'PUT', 'DELETE']),
  required: false,
  concurrent: 'wait' as const,
  graceMs: 30_000,
  maxLifetimeMs: 600_000,
  maxResponseBytes: 1_048_576,
  storeTimeoutMs: 250,
  onStoreError: 'closed' as const,
  retryAfterSeconds: 1,
});

/** Counts of what the layer did, since it was created. */
export interface IdempotencyStats {
  /** Requests with a key that ran (claimed their key). */
  executed: number;
  /** Repeats answered with a stored response (`Idempotent-Replayed: true`). */
  replayed: number;
  /** Repeats that waited for the first request with their key. */
  waited: number;
  /** 409: a repeat while the first runs (`concurrent: 'conflict'`), or of a response too large to store. */
  conflicts: number;
  /** 422: the key came back with another request (method, path or body). */
  mismatches: number;
  /** 400: a malformed key, or none where one is required. */
  invalidKeys: number;
  /** Store operations that failed or timed out. */
  storeErrors: number;
  /** Requests run without deduplication because the store failed (`onStoreError: 'open'`). */
  failedOpen: number;
  /** Requests refused with 503 because the store failed (`onStoreError: 'closed'`). */
  failedClosed: number;
}

/** How an adapter writes one of the layer's answers (a replay, or a 4xx/503 of its own). */
export type IdempotencyReply = (
  status: number,
  headers: Record<string, string | string[]>,
  body: Buffer,
) => void;

/** The layer, shared by the requests of one server (or of several, with one store). */
export interface Idempotency {
  /** What the layer did so far. */
  stats(): IdempotencyStats;
  /**
   * Puts one request through the layer: `run` continues to the handler (at most once), or the layer
   * answers with `reply`. Never rejects. `arrivalMs`: the adapter's reading of `deadline.clock` as
   * the request arrived, taken as the layer's time now when that clock is the layer's own (one
   * reading fewer per request).
   * @internal Called by the adapters.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    deadline: Deadline,
    run: () => void,
    reply?: IdempotencyReply,
    parsedBody?: () => unknown,
    arrivalMs?: number,
  ): void;
}

/** The response header that marks a replay. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Statuses that say the request was not processed and may be sent again: the key is released
 * rather than the answer stored. A 504 keeps the key claimed until the record expires: the handler
 * may still be running (prazo answers 504 at the deadline without stopping it).
 */
function isReleasedStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status === 503;
}
/** See {@link isReleasedStatus}. */
const KEPT_STATUS = 504;

/** The headers of a response not stored (its body went over the bound): none are kept. */
const NO_HEADERS: Record<string, string | string[]> = Object.freeze({});

/**
 * Creates the server-side idempotency layer (IETF httpapi draft "The Idempotency-Key HTTP Header
 * Field"). Give it to an adapter (`idempotency` option of `withDeadlineHandler` and `deadlinePlugin`,
 * or `idempotencyMiddleware` in Express). For a request of `methods` with an `Idempotency-Key`:
 *
 * - the first request with the key runs; its response (status, headers, body up to
 *   `maxResponseBytes`) is stored until the request's deadline plus `graceMs`;
 * - a repeat after it finished gets that response again, with `Idempotent-Replayed: true`;
 * - a repeat while it runs waits for it (`concurrent: 'wait'`) or gets **409** (`'conflict'`);
 * - the key with another method, path or body gets **422**; a malformed key **400**;
 * - when the store fails: **503** + `Retry-After` (`onStoreError: 'closed'`) or the request runs
 *   (`'open'`).
 *
 * @throws {InvalidOptionError} for bad options.
 * @see IETF httpapi draft "The Idempotency-Key HTTP Header Field" (draft-ietf-httpapi-idempotency-key-header).
 * @example
 * const idempotency = createIdempotency({ store: createRedisIdempotencyStore({ client: new Redis() }) });
 * http.createServer(withDeadlineHandler(createOrder, { defaultMs: 1000, maxMs: 5000, idempotency }));
 */
export function createIdempotency(options: IdempotencyOptions = {}): Idempotency {
  const o = normalize(options);
  const { store, clock } = o;
  const stats: IdempotencyStats = {
    executed: 0,
    replayed: 0,
    waited: 0,
    conflicts: 0,
    mismatches: 0,
    invalidKeys: 0,
    storeErrors: 0,
    failedOpen: 0,
    failedClosed: 0,
  };
  // Owners are unique per process (one random prefix, then a counter): cheaper than a UUID per request.
  const ownerPrefix = `${randomUUID()}:`;
  let owners = 0;
  let lastPath = '';
  const lifetime = { defaultMs: 1, maxMs: o.maxLifetimeMs, skewMs: 0 };
  // The in-memory store in this process hands its claim over: completing it looks the key up no more.
  const held = (store as { [HELD_CLAIMS]?: HeldClaims })[HELD_CLAIMS];
  // A store on the layer's own clock takes the layer's reading of it: one clock read per step of a
  // keyed request (its claim, its completion), not one in the layer and another in the store.
  const sharedClock = held !== undefined && held.clock === clock;

  /** A store operation bounded by `storeTimeoutMs`: a stalled client never holds the request. */
  // A store that answers at once (the in-memory one) is not given a timer: no timer and no promise
  // per operation on the path every keyed request takes.
  const bounded = <T>(operation: () => T | Promise<T>, late?: (value: T) => void): T | Promise<T> => {
    let result: T | Promise<T>;
    try {
      result = operation();
    } catch (error) {
      return Promise.reject(error);
    }
    return isThenable(result) ? withTimeout(result, late) : result;
  };
  const withTimeout = <T>(pending: Promise<T>, late?: (value: T) => void): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      let timedOut = false;
      const timer = clock.setTimeout(() => {
        timedOut = true;
        reject(new Error(`The idempotency store did not answer within ${o.storeTimeoutMs} ms.`));
      }, o.storeTimeoutMs);
      pending.then(
        (value) => {
          clock.clearTimeout(timer);
          if (timedOut) late?.(value);
          else resolve(value);
        },
        (error: unknown) => {
          clock.clearTimeout(timer);
          reject(error);
        },
      );
    });
  /** What a store operation nobody waits for (completing, releasing) answered: its failure is counted. */
  const background = (result: unknown): void => {
    if (isThenable(result)) withTimeout(result).then(undefined, storeFailed);
  };
  /** A store operation that threw rather than rejected: counted the same way, as a rejection would be. */
  const thrown = (error: unknown): void => {
    Promise.reject(error).then(undefined, storeFailed);
  };
  const release = (key: string, owner: string): void => {
    try {
      background(store.release(key, owner));
    } catch (error) {
      thrown(error);
    }
  };
  const storeFailed = (error: unknown): void => {
    stats.storeErrors++;
    try {
      o.onStoreFailure?.(error);
    } catch {
      // a logger that throws changes nothing
    }
  };

  /**
   * One request that claimed its key: it runs the handler and stores what the handler answers. An
   * object with its methods on the prototype, told by the response capture when the handler ends
   * the response: every keyed request takes this path, so it makes no closure of its own.
   */
  class Execution implements CaptureOwner {
    readonly #key: string;
    /** Its owner is `${ownerPrefix}${#ownerNumber}`, its request `${#method} ${#path}`: joined only when needed. */
    readonly #ownerNumber: number;
    readonly #method: string;
    readonly #path: string;
    readonly #body: BodyTap;
    readonly #ttlMs: number;
    readonly #startedMs: number;
    readonly #res: ServerResponse;
    /** The claim the in-memory store handed over, if it did. */
    #held: HeldClaim | undefined = undefined;

    constructor(
      key: string,
      ownerNumber: number,
      method: string,
      path: string,
      body: BodyTap,
      ttlMs: number,
      startedMs: number,
      res: ServerResponse,
    ) {
      this.#key = key;
      this.#ownerNumber = ownerNumber;
      this.#method = method;
      this.#path = path;
      this.#body = body;
      this.#ttlMs = ttlMs;
      this.#startedMs = startedMs;
      this.#res = res;
    }

    get owner(): string {
      return `${ownerPrefix}${this.#ownerNumber}`;
    }

    get request(): string {
      return `${this.#method} ${this.#path}`;
    }

    /** Continues to the handler under a claim the in-memory store handed over. */
    runHeld(run: () => void, claim: HeldClaim): void {
      this.#held = claim;
      this.run(run);
    }

    /** Continues to the handler (`run`) under the claim, capturing its response. */
    run(run: () => void): void {
      const res = this.#res;
      if (res.headersSent || res.destroyed) {
        // The deadline passed (the adapter answered) or the client left while the key was claimed.
        this.#release();
        return;
      }
      stats.executed++;
      captureResponse(res, o.maxResponseBytes, this);
      // Its client, gone after a read timeout, comes back with the same key for this execution's answer.
      runOnAfterDisconnect(res);
      run();
    }

    /** The handler ended the response: store it, or give the key back, or keep the claim. */
    onResponseEnd(capture: ResponseCapture): void {
      const status = this.#res.statusCode;
      if (status === KEPT_STATUS) return; // outcome unknown: keep the claim until it expires
      if (isReleasedStatus(status)) {
        this.#release();
        return;
      }
      // A handler that answered before reading the whole body (or without reading it): the rest is
      // still arriving (Node reads and discards it once the response is done, through the tap), and
      // the fingerprint is the whole body's, or a retry with the same body would be refused as a
      // reuse of the key (422). A connection closed before the body's end completes the record with
      // what arrived: the handler ran, and a refused retry is better than a second run.
      const body = this.#body;
      if (body.ended) this.#complete(capture);
      else body.drain().then(() => this.#complete(capture), thrown);
    }

    #complete(capture: ResponseCapture): void {
      const nowMs = clock.now();
      const ttl = this.#ttlMs - (nowMs - this.#startedMs);
      try {
        const claim = this.#held;
        if (claim !== undefined) {
          // The store keeps the parts it is given, without a response object or a copy of a short body.
          const body = capture.body();
          const headers = body === null ? NO_HEADERS : capture.headers();
          // A small body is its own fingerprint: the store keeps its bytes (no base64 string per request).
          const digest = this.#body.small() ?? this.#body.digest();
          const status = this.#res.statusCode;
          const at = sharedClock ? nowMs : undefined;
          held!.completeParts(claim, digest, status, headers, body, ttl, at);
        } else {
          const fingerprint = `${this.request} ${this.#body.digest()}`;
          background(store.complete(this.#key, this.owner, fingerprint, capture.stored(), ttl));
        }
      } catch (error) {
        thrown(error);
      }
    }

    #release(): void {
      const claim = this.#held;
      if (claim === undefined) release(this.#key, this.owner);
      else
        try {
          held!.release(claim);
        } catch (error) {
          thrown(error);
        }
    }
  }

  const handle: Idempotency['handle'] = (req, res, deadline, run, reply, parsedBody, arrivalMs) => {
    const method = req.method ?? 'GET';
    if (!o.methods.has(method)) return run();
    // Node builds `req.headers` behind a getter: read it once.
    const headers = req.headers;
    const parsed = readIdempotencyKey(headers[IDEMPOTENCY_KEY_HEADER]);
    if (parsed === undefined) {
      if (!o.required) return run();
      stats.invalidKeys++;
      return answer(
        reply,
        res,
        400,
        'IDEMPOTENCY_KEY_MISSING',
        'This request needs an Idempotency-Key header.',
      );
    }
    if (!parsed.ok) {
      stats.invalidKeys++;
      return answer(
        reply,
        res,
        400,
        'IDEMPOTENCY_KEY_INVALID',
        `The Idempotency-Key header is ${parsed.problem}.`,
      );
    }
    // The key as read (hashed, and copied into the in-memory store from its header value), or scoped.
    const hashed: HashedKey = o.scope === undefined ? parsed : hashedKey(scoped(o.scope, req, parsed.key));
    const key = hashed.key;
    // The request's path, as the last one when equal (most keyed requests go to a few routes): the
    // record held for seconds keeps that string rather than each request's own.
    let path = req.url ?? '';
    if (path === lastPath) path = lastPath;
    else lastPath = path;
    const body = tapBody(req, parsedBody);
    const now = arrivalMs !== undefined && deadline.clock === clock ? arrivalMs : clock.now();
    const sent = headers[DEADLINE_HEADER];
    const grpc = headers[GRPC_TIMEOUT_HEADER];
    // The caller's own limit, which may be later than this service's cap (held to maxLifetimeMs).
    const callerLimitMs =
      sent === undefined && grpc === undefined
        ? deadline.limitMs
        : parseDeadlineHeaderWith(sent, grpc, now, lifetime).limitMs;
    const ttlMs = Math.max(deadline.limitMs, callerLimitMs) - now + o.graceMs;
    const execution = new Execution(key, ++owners, method, path, body, ttlMs, now, res);

    let first: IdempotencyRecord | null | Promise<IdempotencyRecord | null>;
    let claimed: HeldClaim | undefined;
    try {
      if (held !== undefined) {
        const found = held.claimParts(
          hashed,
          ownerPrefix,
          owners,
          method,
          path,
          ttlMs,
          sharedClock ? now : undefined,
        );
        if (isHeldClaim(found)) {
          claimed = found;
          first = null;
        } else first = found;
      } else first = store.claim(key, execution.owner, execution.request, ttlMs);
    } catch (error) {
      first = Promise.reject(error);
    }
    if (claimed !== undefined) return execution.runHeld(run, claimed);
    // The usual case, a new key in a store that answers at once: run, with nothing more to set up.
    if (first === null) return execution.run(run);
    contested(
      res,
      deadline,
      run,
      reply,
      key,
      execution.owner,
      execution.request,
      ttlMs,
      body,
      execution,
      first,
    );
  };

  /** Everything but a fresh claim answered at once: a record found, a remote store, a store failure. */
  const contested = (
    res: ServerResponse,
    deadline: Deadline,
    run: () => void,
    reply: IdempotencyReply | undefined,
    key: string,
    owner: string,
    request: string,
    ttlMs: number,
    body: BodyTap,
    execution: Execution,
    answered: IdempotencyRecord | Promise<IdempotencyRecord | null>,
  ): void => {
    // A claim that lands after its timeout (a client that queued it while Redis was away) is given
    // back at once: nobody runs under it.
    const late = (record: IdempotencyRecord | null): void => {
      if (record === null) release(key, owner);
    };
    const claim = () => bounded(() => store.claim(key, owner, request, ttlMs), late);
    const first = isThenable(answered) ? withTimeout(answered, late) : answered;
    const failed = (error: unknown): void => {
      storeFailed(error);
      if (o.onStoreError === 'open') {
        stats.failedOpen++;
        run();
        return;
      }
      stats.failedClosed++;
      answer(reply, res, 503, 'IDEMPOTENCY_STORE_UNAVAILABLE', 'The idempotency store cannot be reached.', {
        'retry-after': String(o.retryAfterSeconds),
      });
    };

    const replay = async (record: IdempotencyRecord & { state: 'done' }): Promise<void> => {
      await body.drain();
      if (record.fingerprint !== `${request} ${body.digest()}`) return mismatch();
      if (record.response === null) {
        stats.conflicts++;
        return answer(
          reply,
          res,
          409,
          'IDEMPOTENT_RESPONSE_NOT_STORED',
          'A request with this Idempotency-Key already ran; its response was too large to store for replay.',
        );
      }
      stats.replayed++;
      sendStored(reply, res, record.response);
    };
    const mismatch = (): void => {
      stats.mismatches++;
      answer(
        reply,
        res,
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with another request (method, path or body).',
      );
    };

    const decide = async (): Promise<void> => {
      let waited = false;
      // A claim that finds the key released or expired while waiting claims it again (bounded).
      for (let round = 0; round < 4; round++) {
        const found = round === 0 ? await first : await claim();
        if (found === null) return execution.run(run);
        if (found.state === 'done') return replay(found);
        if (found.request !== request) return mismatch();
        if (o.concurrent === 'conflict') {
          stats.conflicts++;
          return answer(
            reply,
            res,
            409,
            'IDEMPOTENCY_KEY_IN_USE',
            'A request with this Idempotency-Key is still being processed.',
          );
        }
        if (!waited) stats.waited++;
        waited = true;
        const after = await waitWhileRunning(key, deadline, res);
        if (after === 'gone') return; // the deadline passed or the client left: the adapter answers
        if (after !== null) return replay(after);
      }
      failed(new Error('The idempotency key kept changing hands.'));
    };
    decide().catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) failed(error);
      else storeFailed(error);
    });
  };

  /** Polls the record until it is done (resolves it), gone (null), or the request cannot wait ('gone'). */
  const waitWhileRunning = async (
    key: string,
    deadline: Deadline,
    res: ServerResponse,
  ): Promise<(IdempotencyRecord & { state: 'done' }) | null | 'gone'> => {
    let delayMs = 2;
    for (;;) {
      const remaining = deadline.remainingMs();
      if (remaining <= 0 || res.destroyed || res.headersSent) return 'gone';
      await new Promise<void>((resolve) => clock.setTimeout(resolve, Math.min(delayMs, remaining)));
      delayMs = Math.min(delayMs * 2, 50);
      if (deadline.remainingMs() <= 0 || res.destroyed || res.headersSent) return 'gone';
      const record = await bounded(() => store.get(key));
      if (record === null) return null;
      if (record.state === 'done') return record;
    }
  };

  return { stats: () => ({ ...stats }), handle };
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function scoped(scope: (req: IncomingMessage) => string, req: IncomingMessage, key: string): string {
  let space = '';
  try {
    const value = scope(req);
    if (typeof value === 'string') space = value;
  } catch {
    // the unscoped space
  }
  // The key's own characters are printable ASCII: a NUL cannot occur in it, so the join is unambiguous.
  return `${space}\u0000${key}`;
}

/** Writes an answer with the adapter's `reply`, or on the raw response (`prazo/http`, `prazo/express`). */
function send(
  reply: IdempotencyReply | undefined,
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  body: Buffer,
): void {
  if (reply !== undefined) {
    reply(status, headers, body);
    return;
  }
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-length': body.length });
  res.end(body);
}

function sendStored(reply: IdempotencyReply | undefined, res: ServerResponse, stored: StoredResponse): void {
  if (res.headersSent || res.destroyed) return;
  send(
    reply,
    res,
    stored.status,
    { ...stored.headers, [REPLAYED_HEADER]: 'true' },
    Buffer.isBuffer(stored.body)
      ? stored.body
      : Buffer.from(stored.body.buffer, stored.body.byteOffset, stored.body.byteLength),
  );
}

function answer(
  reply: IdempotencyReply | undefined,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(JSON.stringify({ error: { code, message } }));
  send(reply, res, status, { 'content-type': 'application/json; charset=utf-8', ...headers }, body);
}

interface NormalizedIdempotencyOptions {
  store: IdempotencyStore;
  methods: ReadonlySet<string>;
  required: boolean;
  concurrent: 'wait' | 'conflict';
  graceMs: number;
  maxLifetimeMs: number;
  maxResponseBytes: number;
  storeTimeoutMs: number;
  onStoreError: 'closed' | 'open';
  retryAfterSeconds: number;
  scope: ((req: IncomingMessage) => string) | undefined;
  onStoreFailure: ((error: unknown) => void) | undefined;
  clock: Clock;
}

function normalize(options: IdempotencyOptions): NormalizedIdempotencyOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('idempotency', 'an object of idempotency options', options);
  const d = IDEMPOTENCY_DEFAULTS;
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')
    throw new InvalidOptionError('clock', 'a Clock (now, setTimeout, clearTimeout)', clock);
  const store = options.store ?? createMemoryIdempotencyStore({ clock });
  for (const name of ['claim', 'complete', 'release', 'get'] as const)
    if (typeof (store as unknown as Record<string, unknown>)?.[name] !== 'function')
      throw new InvalidOptionError('store', 'an idempotency store (createMemoryIdempotencyStore() …)', store);
  const methods = options.methods ?? d.methods;
  if (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !/^[A-Za-z]+$/.test(m)))
    throw new InvalidOptionError('methods', 'an array of HTTP method names', methods);
  const required = options.required ?? d.required;
  if (typeof required !== 'boolean') throw new InvalidOptionError('required', 'true or false', required);
  const concurrent = options.concurrent ?? d.concurrent;
  if (concurrent !== 'wait' && concurrent !== 'conflict')
    throw new InvalidOptionError('concurrent', "'wait' or 'conflict'", concurrent);
  const onStoreError = options.onStoreError ?? d.onStoreError;
  if (onStoreError !== 'closed' && onStoreError !== 'open')
    throw new InvalidOptionError('onStoreError', "'closed' or 'open'", onStoreError);
  const scope = options.scope;
  if (scope !== undefined && typeof scope !== 'function')
    throw new InvalidOptionError('scope', 'a function', scope);
  const onStoreFailure = options.onStoreFailure;
  if (onStoreFailure !== undefined && typeof onStoreFailure !== 'function')
    throw new InvalidOptionError('onStoreFailure', 'a function', onStoreFailure);
  return {
    store,
    methods: new Set(methods.map((m: string) => m.toUpperCase())),
    required,
    concurrent,
    graceMs: nonNegative('graceMs', options.graceMs ?? d.graceMs),
    maxLifetimeMs: positive('maxLifetimeMs', options.maxLifetimeMs ?? d.maxLifetimeMs),
    maxResponseBytes: nonNegative('maxResponseBytes', options.maxResponseBytes ?? d.maxResponseBytes),
    storeTimeoutMs: positive('storeTimeoutMs', options.storeTimeoutMs ?? d.storeTimeoutMs),
    onStoreError,
    retryAfterSeconds: positive('retryAfterSeconds', options.retryAfterSeconds ?? d.retryAfterSeconds),
    scope,
    onStoreFailure,
    clock,
  };
}

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new InvalidOptionError(name, 'a positive number', value);
  return value;
}

function nonNegative(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new InvalidOptionError(name, 'a number ≥ 0', value);
  return value;
}
