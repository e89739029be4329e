import diagnostics from 'node:diagnostics_channel';

/**
 * The `node:diagnostics_channel` name each dependency event is published on, in undici's style
 * (`undici:request:create` …), so APM tools subscribe without importing prazo:
 * `diagnostics_channel.subscribe('prazo:attempt:end', (event) => …)`. The message is the event's
 * payload, as `dependency.on()` listeners get it (docs/client.md, "Events"). Every event has its channel:
 * the event hub looks each one up by its event name, which does not compile for a name missing here.
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
  'server-timing-ignored': 'prazo:ledger:server-timing-ignored',
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
} as const);

/** Name of an event that has a diagnostics channel (every dependency event). */
export type ChanneledEvent = keyof typeof DIAGNOSTICS_CHANNELS;

/**
 * The channels, created once. `Channel.hasSubscribers` is a property read, so an event nobody
 * subscribes to costs the events' own `has()` check and nothing more: no payload is built.
 */
export const channels: { readonly [K in ChanneledEvent]: diagnostics.Channel } = Object.freeze(
  Object.fromEntries(
    Object.entries(DIAGNOSTICS_CHANNELS).map(([event, name]) => [event, diagnostics.channel(name)]),
  ) as { [K in ChanneledEvent]: diagnostics.Channel },
);
