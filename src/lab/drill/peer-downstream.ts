import { createCockatielCaller } from './cockatiel-caller.js';
import { callerDownstream, type Downstream, type DownstreamHooks } from './downstream.js';
import { createNaiveCaller, type NaiveCaller } from './naive-caller.js';
import { createOpossumCaller } from './opossum-caller.js';
import type { PeerCallerOptions, PeerSettings } from './peer-settings.js';
import type { TierSpec } from './service-spec.js';
import { createUndiciRetryCaller } from './undici-retry-caller.js';

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
    onAttempt: (kind, durationMs, ok, variant) => hooks.onAttempt(kind, variant, durationMs, ok),
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
              onAttempt: (kind, durationMs, ok, variant) => hooks.onAttempt(kind, variant, durationMs, ok),
            });
  // HAProxy's `timeout server` is the same per-attempt read timeout.
  return callerDownstream(caller, peer.readMs);
}
