import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, systemClock, type Timer } from 'prazo';
import { type Idempotency, withDeadlineHandler } from 'prazo/http';
import { afterServiceMs, type Behaviour, pickOutcome } from '../../behaviour.js';
import { sampleLatencyMs } from '../../latency-distribution.js';
import type { Random } from '../../random.js';

/** The supplier's route for the checkout's order write. */
export const ORDER_WRITE_PATH = '/orders';

/** The header that carries a checkout's id down the chain, to the order write's body. */
export const CHECKOUT_ID_HEADER = 'x-checkout-id';

/** Largest order write body the supplier reads, in bytes (the body is `{"checkout":"<id>"}`). */
const MAX_WRITE_BODY_BYTES = 4_096;

/**
 * The orders one supplier instance created: how many times each checkout's order was created.
 * Counted where the side effect happens, whoever asked and whatever answer got back.
 */
export interface OrderBook {
  /** One order created for `checkout`. */
  record(checkout: string): void;
  /** The orders created since the previous call, as `[checkout, times created]`; then starts over. */
  take(): Array<[checkout: string, created: number]>;
}

/** Creates an empty {@link OrderBook}. */
export function createOrderBook(): OrderBook {
  let created = new Map<string, number>();
  return {
    record(checkout) {
      created.set(checkout, (created.get(checkout) ?? 0) + 1);
    },
    take() {
      const taken = [...created];
      created = new Map();
      return taken;
    },
  };
}

/**
 * A column's order writes, from what every supplier instance created (their {@link OrderBook}s) and
 * what the edge was answered.
 */
export interface OrderWriteFigures {
  /** Orders created (side effects), over every instance. */
  created: number;
  /** Checkouts with at least one order. */
  checkouts: number;
  /** Orders created beyond the first for their checkout: `created − checkouts` (a third copy counts 2). */
  duplicates: number;
  /** Checkouts with more than one order. */
  checkoutsWithDuplicates: number;
  /** Order writes the edge sent (one per checkout whose stock read succeeded). */
  sent: number;
  /** Order writes the edge got a 2xx answer for: writes that succeeded. */
  succeeded: number;
}

/**
 * Sums the order books of a column's supplier instances. A checkout's orders are counted across the
 * instances: a retry that lands on another instance and creates the order again is a duplicate.
 */
export function orderWriteFigures(
  books: ReadonlyArray<ReadonlyArray<readonly [string, number]>>,
  writes: { sent: number; succeeded: number },
): OrderWriteFigures {
  const byCheckout = new Map<string, number>();
  let created = 0;
  for (const book of books) {
    for (const [checkout, times] of book) {
      created += times;
      byCheckout.set(checkout, (byCheckout.get(checkout) ?? 0) + times);
    }
  }
  let checkoutsWithDuplicates = 0;
  for (const times of byCheckout.values()) if (times > 1) checkoutsWithDuplicates++;
  return {
    created,
    checkouts: byCheckout.size,
    duplicates: created - byCheckout.size,
    checkoutsWithDuplicates,
    sent: writes.sent,
    succeeded: writes.succeeded,
  };
}

/** Options of {@link createOrderWriteRoute}. */
export interface OrderWriteRouteOptions {
  /** The instance's behaviour now (its faults apply to the writes as to the reads). */
  behaviour(): Behaviour;
  random: Random;
  book: OrderBook;
  /**
   * prazo's server idempotency layer, for the prazo column: the route then runs behind
   * `withDeadlineHandler` with it, under the caller's deadline capped at `deadlineMs`.
   */
  idempotency?: Idempotency;
  /** Cap of a write's deadline with the layer, in ms. @default 1900 */
  deadlineMs?: number;
  clock?: Clock;
}

/** The supplier's order write route: a double's `route` option, and the timers it holds. */
export interface OrderWriteRoute {
  /** Takes `POST /orders` over (true); leaves everything else to the double (false). */
  route(req: IncomingMessage, res: ServerResponse): boolean;
  /** Clears the timers of the writes still answering. */
  close(): void;
}

/**
 * The supplier's `POST /orders`: creates the order of the checkout in its body, as a service that
 * inserts the order row when the request arrives and answers once the rest of its work is done.
 *
 * The write meets the instance's behaviour at the instant it arrives, as a read does, but holds no
 * worker (the orders table is not the stock lookup's workers, so the reads' capacity figures stay
 * what they were), and it is not counted in the double's request counters. What each outcome does:
 *
 * - a fault status (the fleet phase's sick instance, the error burst: 503): **not written** — a 503
 *   says the request was not processed, the rule prazo's server layer releases a key by;
 * - a reset before the headers, or a hang: not written (the request never got to the insert);
 * - otherwise the order is **created at once**, then answered 200 after a latency drawn from the
 *   behaviour (a trigger's slower service, the tail phase's pauses, the degradation's answer at the
 *   naive timeout, the slow instance's wire delay). An answer that never gets back — its caller's
 *   read timeout, or the reset of the supplier's restart after the degradation — is lost **after**
 *   the write: a blind retry then creates the order again.
 */
export function createOrderWriteRoute(options: OrderWriteRouteOptions): OrderWriteRoute {
  const clock = options.clock ?? systemClock;
  const timers = new Set<Timer>();

  const write = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_WRITE_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const checkout = size <= MAX_WRITE_BODY_BYTES ? checkoutOf(Buffer.concat(chunks)) : null;
      if (checkout === null) {
        answer(res, 400, { error: 'a body {"checkout": "<id>"} is required' });
        return;
      }
      const behaviour = options.behaviour();
      const outcome = pickOutcome(behaviour, options.random());
      if (outcome.kind === 'resetBeforeHeaders') {
        req.socket.destroy();
        return;
      }
      if (outcome.kind === 'hang') return;
      const status = outcome.kind === 'status' ? outcome.status : 200;
      if (status < 300) options.book.record(checkout);
      const delayMs =
        sampleLatencyMs(behaviour.latency, options.random) + afterServiceMs(behaviour, options.random);
      const timer = clock.setTimeout(() => {
        timers.delete(timer);
        if (outcome.kind === 'resetMidBody') {
          res.socket?.destroy();
          return;
        }
        answer(res, status, status < 300 ? { order: checkout } : { error: 'unavailable' });
      }, delayMs);
      timers.add(timer);
      res.once('close', () => {
        timers.delete(timer);
        clock.clearTimeout(timer);
      });
    });
  };

  const handler = options.idempotency
    ? withDeadlineHandler(write, {
        defaultMs: options.deadlineMs ?? 1_900,
        maxMs: options.deadlineMs ?? 1_900,
        trust: 'all',
        idempotency: options.idempotency,
        clock,
      })
    : write;

  return {
    route(req, res) {
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== ORDER_WRITE_PATH) return false;
      void handler(req, res);
      return true;
    },
    close() {
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
    },
  };
}

/** The checkout id of a write's body, or null when the body is not `{"checkout": "<non-empty id>"}`. */
export function checkoutOf(body: Buffer): string | null {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const checkout = (parsed as { checkout?: unknown } | null)?.checkout;
    return typeof checkout === 'string' && checkout.length > 0 && checkout.length <= 200 ? checkout : null;
  } catch {
    return null;
  }
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
