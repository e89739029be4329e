/**
 * `prazo/balancer`: the instance balancer under the client — the power of two choices over peak
 * EWMA, slow start, outlier ejection and draining — as a plain object: outcomes in, the next
 * instance out, time passed in by the caller. For a client of your own over several instances, or a
 * simulation that must choose instances as prazo does (`prazo-lab simulate instances`).
 *
 * @packageDocumentation
 */
export type { Balancer, BalancerSnapshot, InstanceSnapshot, RemoveResult } from './balancer.js';
export { createBalancer } from './balancer.js';
export type { BalancerOptions } from './balancer-options.js';
export type { InstanceOutcome } from './instance-outcome.js';
export { instanceOutcomeOfStatus } from './instance-outcome.js';
export type { InstanceState, InstanceTransition, TransitionReason } from './instance-transition.js';
