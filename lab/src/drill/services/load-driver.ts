import { DEADLINE_HEADER } from 'prazo/wire';
import type { Pool } from 'undici';
import { undici } from '../../undici.js';
import { errorCodeOf } from './error-body.js';
import type { DrillConfig } from './spec.js';

/** The drill's two user-facing routes. */
export type Route = 'checkout' | 'catalog';

/** One user request as the user saw it. */
export interface UserResult {
  config: DrillConfig;
  route: Route;
  /** `hedged` or `unhedged` for checkouts (alternating), `''` for the catalog. */
  variant: string;
  /** When it was sent, in ms since the traffic started. */
  sentAtMs: number;
  /** How long until it answered or the user gave up, in ms. */
  durationMs: number;
  /** Answered 200 within the user's deadline (goodput, see {@link isGoodput}). */
  ok: boolean;
  /** HTTP status, or 0 when the user gave up or the connection failed. */
  status: number;
  /**
   * Why it failed, `''` when it did not: `'<status> <code>'` (the code of the answer's JSON body,
   * e.g. `'504 DEADLINE_INSUFFICIENT'`), `'200 after the deadline'`, `'gave up'` (no answer by the
   * user's deadline) or `'connection failed'`.
   */
  reason: string;
}

/** Options of {@link startLoad}. */
export interface LoadOptions {
  /** Base URL of each configuration's shop; every arrival is sent to all of them at the same instant. */
  targets: ReadonlyArray<{ config: DrillConfig; url: string }>;
  rps: number;
  checkoutShare: number;
  /** The user gives up after this long, in ms (the request is aborted). */
  userDeadlineMs: number;
  /** How long to send for, in ms. */
  durationMs: number;
  onResult: (result: UserResult) => void;
}

/** A running load. */
export interface Load {
  /** Resolves once every request has been sent and has ended. */
  readonly done: Promise<void>;
  /** Stops sending (requests in flight still end, bounded by the user deadline). */
  stop(): void;
  close(): Promise<void>;
}

const TICK_MS = 5;

/**
 * Whether a user request counts as a success: a 200 that reached the user within the user's deadline
 * (goodput). Measured on the clock, not on whether the give-up timer had fired: on a busy machine the
 * timer fires late, and an answer after the deadline helps nobody.
 */
export function isGoodput(status: number, durationMs: number, userDeadlineMs: number): boolean {
  return status === 200 && durationMs <= userDeadlineMs;
}

/** {@link UserResult.reason} of a request that failed. */
export function failureReason(status: number, body: string, gaveUp: boolean): string {
  if (status === 0) return gaveUp ? 'gave up' : 'connection failed';
  if (status === 200) return '200 after the deadline';
  return `${status} ${errorCodeOf(body)}`;
}

/**
 * Open-loop load: arrivals on a fixed schedule (`rps`), whatever the answers — users do not wait for
 * the previous user. The same arrivals go to every configuration so that they are compared on the same
 * traffic. Each request carries the user's deadline (`x-deadline-epoch-ms`) and is aborted at it.
 * Bounded in count (`rps × durationMs`) and in time.
 */
export function startLoad(options: LoadOptions): Load {
  const pools = options.targets.map(({ config, url }) => ({
    config,
    pool: new undici.Pool(url, { connections: 512, pipelining: 1 }),
  }));
  const intervalMs = 1000 / options.rps;
  const total = Math.floor((options.durationMs * options.rps) / 1000);
  const start = performance.now();
  let sent = 0;
  let checkouts = 0;
  let inFlight = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const maybeDone = () => {
    if ((stopped || sent >= total) && inFlight === 0) finish();
  };

  const send = (config: DrillConfig, pool: Pool, route: Route, variant: string, sentAtMs: number) => {
    inFlight++;
    const controller = new AbortController();
    const giveUp = setTimeout(() => controller.abort(), options.userDeadlineMs);
    const began = performance.now();
    const path =
      route === 'catalog' ? '/catalog' : variant === 'unhedged' ? '/checkout?variant=unhedged' : '/checkout';
    const end = (status: number, body: string) => {
      clearTimeout(giveUp);
      inFlight--;
      const durationMs = performance.now() - began;
      const ok = !controller.signal.aborted && isGoodput(status, durationMs, options.userDeadlineMs);
      options.onResult({
        config,
        route,
        variant,
        sentAtMs,
        durationMs,
        ok,
        status,
        reason: ok ? '' : failureReason(status, body, controller.signal.aborted),
      });
      maybeDone();
    };
    pool
      .request({
        path,
        method: 'GET',
        headers: { [DEADLINE_HEADER]: String(Date.now() + options.userDeadlineMs) },
        signal: controller.signal,
      })
      .then(
        async (response) => {
          let body = '';
          try {
            body = await response.body.text();
          } catch {
            // The user gave up while the body was arriving.
          }
          end(response.statusCode, body);
        },
        () => end(0, ''),
      );
  };

  const tick = () => {
    timer = undefined;
    if (stopped) return maybeDone();
    const now = performance.now() - start;
    while (sent < total && sent * intervalMs <= now) {
      const sentAtMs = sent * intervalMs;
      sent++;
      // Spread checkouts evenly: arrival i is a checkout when the running share falls behind.
      const isCheckout = checkouts < sent * options.checkoutShare;
      let variant = '';
      if (isCheckout) {
        variant = checkouts % 2 === 0 ? 'hedged' : 'unhedged';
        checkouts++;
      }
      for (const { config, pool } of pools)
        send(config, pool, isCheckout ? 'checkout' : 'catalog', variant, sentAtMs);
    }
    if (sent < total) timer = setTimeout(tick, TICK_MS);
    else maybeDone();
  };
  tick();

  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      maybeDone();
    },
    async close() {
      if (timer) clearTimeout(timer);
      await Promise.all(pools.map(({ pool }) => pool.destroy()));
    },
  };
}
