import { createCockatielCaller } from '../peers/cockatiel-caller.js';
import { createNaiveCaller, type NaiveCaller } from '../peers/naive-caller.js';
import { createOpossumCaller } from '../peers/opossum-caller.js';
import type { PeerCallerOptions, PeerSettings } from '../peers/settings.js';
import { createUndiciRetryCaller } from '../peers/undici-retry-caller.js';
import { callerDownstream, type Downstream, type DownstreamHooks } from './downstream.js';
import type { TierSpec } from './spec.js';

/**
 * The edge (inventory → supplier) of a peer configuration: the peer's own client, set up as its
 * documentation recommends, with the settings every peer gets. For HAProxy the edge makes one attempt
 * to the sidecar (its `downstream`), bounded by the gateway's deadline, and HAProxy does the rest.
 * Like naive, a peer has no deadline propagation: the user's header is passed along untouched, only so
 * the supplier double can count the requests that arrive after the user has gone.
 */
export function createPeerDownstream(spec: TierSpec, peer: PeerSettings, hooks: DownstreamHooks): Downstream {
  const options: PeerCallerOptions = {
    ...peer,
    origins: spec.downstream,
    onAttempt: (kind, durationMs, ok, variant, trace) =>
      hooks.onAttempt(kind, variant, durationMs, ok, trace),
  };
  const caller: NaiveCaller =
    spec.config === 'cockatiel'
      ? createCockatielCaller(options)
      : spec.config === 'opossum'
        ? createOpossumCaller(options)
        : spec.config === 'undici-retry'
          ? createUndiciRetryCaller(options)
          : createNaiveCaller({
              name: spec.downstreamName,
              origins: spec.downstream,
              timeoutMs: peer.deadlineMs,
              attempts: 1,
              onAttempt: (kind, durationMs, ok, variant, trace) =>
                hooks.onAttempt(kind, variant, durationMs, ok, trace),
            });
  // HAProxy's `timeout server` is the same per-attempt read timeout.
  return callerDownstream(caller, peer.readMs, spec.name);
}
