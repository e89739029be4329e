/**
 * prazo/lab — the dependency double and the pieces of the drill.
 *
 * @packageDocumentation
 */
export type { AttemptInfo, AttemptKind } from './attempt-header.js';
export {
  ATTEMPT_HEADER,
  ATTEMPT_KINDS,
  DEADLINE_HEADER,
  formatAttemptHeader,
  parseAttemptHeader,
} from './attempt-header.js';
export type { Behaviour, BehaviourInput, Outcome, ShareInput, StatusShare } from './behaviour.js';
export { DEFAULT_BEHAVIOUR, parseBehaviour, parseBehaviourJson, pickOutcome } from './behaviour.js';
export type { Double, DoubleOptions } from './double.js';
export { ADMIN_PREFIX, DEFAULT_DOUBLE_OPTIONS, normalizeDoubleOptions, startDouble } from './double.js';
export type { DoubleGroup, DoubleGroupOptions } from './double-group.js';
export { MAX_INSTANCES, startDoubles } from './double-group.js';
export type { DoubleStats, FaultCounts, RequestRecord } from './double-stats.js';
export type {
  FixedLatency,
  LatencyDistribution,
  LognormalLatency,
  MixtureLatency,
} from './latency-distribution.js';
export { MAX_DELAY_MS, sampleLatencyMs } from './latency-distribution.js';
export type { Random } from './random.js';
export { createRandom, lognormalMs, standardNormal } from './random.js';
