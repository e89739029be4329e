import { calibrateTimeout } from 'prazo/policy';
import type { AttemptKind } from 'prazo/wire';
import type { NormalizedDrillOptions } from '../drill-options.js';
import { supplierService } from '../phase-plan.js';
import type { AttemptTrace } from '../waterfall/trail.js';

/** The alternatives the drill runs beside naive and prazo with `--peers`. */
export type PeerConfig = 'cockatiel' | 'opossum' | 'undici-retry' | 'haproxy';

/** The peers, in display order. */
export const PEER_CONFIGS: readonly PeerConfig[] = Object.freeze([
  'cockatiel',
  'opossum',
  'undici-retry',
  'haproxy',
]);

/**
 * The numbers every peer is given, the same for all and never weaker than prazo's: the per-attempt
 * timeouts come from {@link calibrateTimeout} on the supplier's nominal healthy p99 (what an operator
 * reads off a dashboard), the attempts are the three most of the peers' documentation recommends, and
 * the whole call is bounded by the gateway's deadline wherever the peer has a knob for it.
 */
export interface PeerSettings {
  /** Connect timeout of each attempt, in ms. */
  connectMs: number;
  /** Read timeout of each attempt (time to the answer), in ms. */
  readMs: number;
  /** Attempts per call, the original included. */
  attempts: number;
  /** Bound of a whole call (all attempts and waits), in ms: the gateway's deadline. */
  deadlineMs: number;
}

/**
 * What one peer client reports of each attempt (the tier counts them like its own), with the call's
 * trace when the call was given one (the drill's waterfall).
 */
export type AttemptListener = (
  kind: AttemptKind,
  durationMs: number,
  ok: boolean,
  tag: string,
  trace?: AttemptTrace,
) => void;

/** Options of a peer's client in the drill. */
export interface PeerCallerOptions extends PeerSettings {
  /** Base URLs of the dependency's instances. */
  origins: readonly string[];
  /** Connections per instance. @default 256 */
  connections?: number;
  onAttempt?: AttemptListener;
}

/** The attempts a peer gets: three, as cockatiel's and HAProxy's documentation recommend. */
export const PEER_ATTEMPTS = 3;

/**
 * The peers' settings for a drill run (see {@link PeerSettings}): timeouts calibrated on the supplier's
 * nominal healthy p99 — its service time's, as sized for the run's utilisation (`supplierService`).
 */
export function peerSettings(options: NormalizedDrillOptions): PeerSettings {
  const policy = calibrateTimeout({
    p99Ms: supplierService(options).p99Ms,
    userDeadlineMs: options.gatewayDeadlineMs,
    attempts: PEER_ATTEMPTS,
  });
  return {
    connectMs: policy.connectMs,
    readMs: policy.readMs,
    attempts: policy.attempts,
    deadlineMs: options.gatewayDeadlineMs,
  };
}

/** The error a peer client throws for a 5xx answer, so that its policies count it as a failure. */
export class UpstreamStatusError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`The dependency answered ${status}.`);
    this.name = 'UpstreamStatusError';
    this.status = status;
    this.body = body;
  }
}
