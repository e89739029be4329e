import type { IncomingMessage, ServerResponse } from 'node:http';
import { createNaiveDownstream, type Downstream, type DownstreamHooks } from './downstream.js';
import type { TierPolicy, TierSpec } from './service-spec.js';

/** A request handler of a tier. */
export type TierHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** PLACEHOLDER until prazo's deadlines and client land: the server side of a prazo tier. */
export function wrapPrazoHandler(handler: TierHandler, _spec: TierSpec): TierHandler {
  return handler;
}

/** PLACEHOLDER until prazo's client lands: the calibrated client of a prazo tier. */
export function createPrazoDownstream(
  spec: TierSpec,
  policy: TierPolicy | null,
  hooks: DownstreamHooks,
): Downstream {
  if (!policy) return createNaiveDownstream({ ...spec, naive: { timeoutMs: 1900, attempts: 1 } }, hooks);
  return createNaiveDownstream(
    { ...spec, naive: { timeoutMs: policy.readMs, attempts: policy.attempts } },
    hooks,
  );
}
