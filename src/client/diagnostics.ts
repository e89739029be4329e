import diagnostics from 'node:diagnostics_channel';
import type { DependencyEventName } from './events.js';

/**
 * The `node:diagnostics_channel` name each dependency event is published on, in undici's style
 * (`undici:request:create` …), so APM tools subscribe without importing prazo:
 * `diagnostics_channel.subscribe('prazo:attempt:end', (event) => …)`. The message is the event's
 * payload, as `dependency.on()` listeners get it (docs/client.md, "Events").
 */
export const DIAGNOSTICS_CHANNELS = Object.freeze({
  'request-start': 'prazo:call:start',
  'attempt-start': 'prazo:attempt:start',
  'attempt-headers': 'prazo:attempt:headers',
  'attempt-end': 'prazo:attempt:end',
  retry: 'prazo:retry',
  hedge: 'prazo:hedge',
  'budget-exhausted': 'prazo:budget:exhausted',
  'fast-fail': 'prazo:deadline:fast-fail',
  'request-end': 'prazo:call:end',
  limited: 'prazo:overload:limited',
  'concurrency-limit': 'prazo:overload:concurrency-limit',
  policy: 'prazo:policy',
  requeue: 'prazo:requeue',
  'instance-ejected': 'prazo:instance:ejected',
  'instance-probing': 'prazo:instance:probing',
  'instance-returned': 'prazo:instance:returned',
  'instance-down': 'prazo:instance:down',
  'instance-up': 'prazo:instance:up',
  'instance-added': 'prazo:instance:added',
  'instance-removed': 'prazo:instance:removed',
  'instance-drained': 'prazo:instance:drained',
  'membership-changed': 'prazo:membership:changed',
  'membership-error': 'prazo:membership:error',
} as const satisfies Record<DependencyEventName, string>);

/**
 * The channels, created once. `Channel.hasSubscribers` is a property read, so an event nobody
 * subscribes to costs the events' own `has()` check and nothing more: no payload is built.
 */
export const channels: { readonly [K in DependencyEventName]: diagnostics.Channel } = Object.freeze(
  Object.fromEntries(
    Object.entries(DIAGNOSTICS_CHANNELS).map(([event, name]) => [event, diagnostics.channel(name)]),
  ) as { [K in DependencyEventName]: diagnostics.Channel },
);
